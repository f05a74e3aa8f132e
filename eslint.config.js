// One linter for the whole tree; type-aware rules stay off to keep `npm test` fast.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Refuses `<up>folder/file.js` (another folder's inner file) unless the file is `index.js`. */
function boundary(up) {
  const escaped = up.replaceAll('.', '\\.');
  return {
    regex: `^${escaped}(?!\\.\\./)[^/]+/(?!index\\.js$).+`,
    message:
      "import another folder through its index.ts (its public face), e.g. '../sandbox/index.js'",
  };
}

/** Refuses `<up>src/<folder>/file.js` unless the file is `index.js` (the shared contract's face). */
function shared(up) {
  const escaped = up.replaceAll('.', '\\.');
  return {
    regex: `^${escaped}src/[^/]+/(?!index\\.js$).+`,
    message: "import the shared contract through its index, e.g. '../../src/protocol/index.js'",
  };
}

export default tseslint.config(
  // Hostile fixtures are tool bodies that misbehave on purpose, not project code.
  {
    ignores: [
      'node_modules/',
      'dist/',
      'data/',
      'test-artifacts/',
      'test/fixtures/hostile/',
      '.probe*/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // runner-image/realm/ is bundled into the script each tool context
    // evaluates (runner-image/realm/install.js, scripts/build-harness.ts):
    // modules with the language's own globals and nothing of Node's or the host's.
    // A tool may replace any of those globals (globalThis.TypeError = …), so the
    // realm reads them only through primordials.js, which captures them before
    // tool code runs (and turns this rule off for itself). undefined, NaN and
    // Infinity are read-only, so not listed.
    files: ['runner-image/realm/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: { process: 'off', console: 'off' },
    },
    rules: {
      'no-undef': 'error',
      'no-restricted-globals': [
        'error',
        ...(
          'AggregateError Array ArrayBuffer Atomics BigInt BigInt64Array BigUint64Array Boolean ' +
          'DataView Date decodeURI decodeURIComponent encodeURI encodeURIComponent Error escape ' +
          'eval EvalError FinalizationRegistry Float16Array Float32Array Float64Array Function ' +
          'globalThis Int16Array Int32Array Int8Array Intl isFinite isNaN Iterator JSON Map Math ' +
          'Number Object parseFloat parseInt Promise Proxy RangeError ReferenceError Reflect ' +
          'RegExp Set SharedArrayBuffer String Symbol SyntaxError TypeError Uint16Array ' +
          'Uint32Array Uint8Array Uint8ClampedArray unescape URIError WeakMap WeakRef WeakSet ' +
          'WebAssembly'
        )
          .split(' ')
          .map((name) => ({
            name,
            message: `a tool may replace the global '${name}': take it from primordials.js`,
          })),
      ],
    },
  },
  {
    // The top-level files (main.ts, config.ts, errors.ts…) use folders through
    // their index.ts too.
    files: ['control-plane/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [boundary('./'), shared('../')] }],
    },
  },
  {
    // Each control-plane folder is used through its index.ts (its public face):
    // an import that reaches into another folder's files is refused. Within a
    // folder, files import each other freely. (Tests and benches may reach in.)
    files: ['control-plane/*/*.ts'],
    ignores: ['control-plane/dashboard/src/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [boundary('../'), shared('../../')] }],
    },
  },
  {
    files: ['control-plane/*/*/*.ts'],
    ignores: ['control-plane/dashboard/src/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [boundary('../../'), shared('../../../')] }],
    },
  },
  {
    files: ['control-plane/*/*/*/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [boundary('../../../'), shared('../../../../')] },
      ],
    },
  },
  {
    // The dashboard runs in the browser: it may take types from the control
    // plane (erased at build), never code.
    files: ['control-plane/dashboard/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../*', '../../../*'],
              allowTypeImports: true,
              message: 'the dashboard may import only types from the control plane',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests read JSON answers whose shape the assertions check.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
