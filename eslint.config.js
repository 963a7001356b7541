// ESLint: JavaScript's recommended rules and typescript-eslint's (syntax only, no type information,
// so it runs in seconds), with the few project choices below.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.cache/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        Buffer: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setImmediate: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        crypto: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        Headers: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
        globalThis: 'readonly',
      },
    },
    rules: {
      // Unused names are errors, except `_`-prefixed ones (kept for a signature's sake).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', destructuredArrayIgnorePattern: '^_' },
      ],
      // Tests and benches read replies of many shapes; `any` there is deliberate (src/ below).
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  // The console's page scripts run in the browser (src/console/static, served as they are).
  {
    files: ['src/console/static/**/*.js'],
    languageOptions: {
      globals: {
        document: 'readonly',
        window: 'readonly',
        location: 'readonly',
        sessionStorage: 'readonly',
        Node: 'readonly',
        atob: 'readonly',
        btoa: 'readonly',
        confirm: 'readonly',
        history: 'readonly',
        URLSearchParams: 'readonly',
      },
    },
  },
  // CommonJS files (a test's --require preload): require is how they load modules.
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // src/ has no `any`, and keeps none.
  { files: ['src/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'error' } },
);
