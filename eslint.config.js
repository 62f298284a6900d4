import tseslint from 'typescript-eslint';

export default tseslint.config(
  // third_party/: vendored upstream code, kept byte for byte as at its pinned commit.
  { ignores: ['**/node_modules/**', '**/dist/**', 'data/**', 'coverage/**', '.tmp/**', 'third_party/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Every error carries a stable code (docs/architecture.md, "Errors"): product code throws a
    // subclass of CodedError (@tessera/contracts), never a bare Error, TypeError or RangeError, so
    // the problem table and the CLI's exit codes can answer it by code. Tests and test support may.
    files: ['packages/*/src/**/*.{ts,js}', 'services/*/src/**/*.{ts,js}'],
    ignores: ['**/*.test.ts', '**/testing/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ThrowStatement > :matches(NewExpression, CallExpression)[callee.name=/^(Error|TypeError|RangeError)$/]',
          message: 'Throw a coded error (a CodedError subclass from @tessera/contracts, or InvalidArgument / InvariantBroken), not a bare Error: every error carries a stable code.',
        },
        {
          selector: "CallExpression[callee.property.name='reject'] > NewExpression[callee.name=/^(Error|TypeError|RangeError)$/]",
          message: 'Reject with a coded error (a CodedError subclass from @tessera/contracts), not a bare Error: every error carries a stable code.',
        },
        {
          selector: "ThrowStatement > CallExpression[callee.object.name='Object'][callee.property.name='assign'] > NewExpression[callee.name=/^(Error|TypeError|RangeError)$/]",
          message: 'Declare a CodedError subclass instead of assigning a code to a bare Error: its code is then an ErrorCode the type checker knows.',
        },
      ],
    },
  },
  {
    // Tool configuration that its tool loads as CommonJS (dependency-cruiser): require() is how it reads files.
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
