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

/**
 * Refuses `<up>folder/…` for a folder not in `allowed`: which folders a
 * folder may depend on at all (top-level files such as errors.ts stay open).
 */
function onlyFolders(up, allowed, who) {
  const escaped = up.replaceAll('.', '\\.');
  return {
    regex: `^${escaped}(?!\\.\\./)(?!(?:${allowed.join('|')})/)[^/]+/`,
    message: `${who} may use only these folders: ${allowed.join(', ')}`,
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
    // identity/ answers who is calling, below every folder that asks it
    // (http/, admin/, mcp/, invocation/, app/): it may use only the store.
    files: ['control-plane/identity/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [boundary('../'), shared('../../'), onlyFolders('../', ['store'], 'identity/')],
        },
      ],
    },
  },
  {
    files: ['control-plane/identity/*/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            boundary('../../'),
            shared('../../../'),
            onlyFolders('../../', ['store'], 'identity/'),
          ],
        },
      ],
    },
  },
  {
    // http/ is the hosted side's transport: it asks identity/ who is calling
    // and never reaches up into what a call does (invocation/, mcp/, admin/).
    files: ['control-plane/http/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            boundary('../'),
            shared('../../'),
            onlyFolders('../', ['identity', 'store'], 'http/'),
          ],
        },
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
