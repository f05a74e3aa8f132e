// One linter for the whole tree; type-aware rules stay off to keep `npm test` fast.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Hostile fixtures are tool bodies that misbehave on purpose, not project code.
  {
    ignores: [
      'node_modules/',
      'dist/',
      'data/',
      'test-artifacts/',
      'test/fixtures/hostile/',
      '.probe/',
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
    // The harness bootstrap is compiled in each tool context's realm (see
    // runner-image/bootstrap/install.js): a script with the language's own
    // globals and nothing of Node's or the host's.
    files: ['runner-image/bootstrap/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { process: 'off', console: 'off' },
    },
    rules: { 'no-undef': 'error', strict: ['error', 'function'] },
  },
  {
    // Tests read JSON answers whose shape the assertions check.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
