// ESLint flat config for the whole repository (`pnpm lint` = `eslint . --max-warnings 0`).
//
// TypeScript files are linted with type information (typescript-eslint's project service: each
// file is checked in the program of its nearest tsconfig that includes it; tests and benches
// fall back to the root tsconfig.json). JavaScript files (configs, scripts) get the plain rules.
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { importX } from 'eslint-plugin-import-x';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

const repoRoot = fileURLToPath(new URL('.', import.meta.url));

const TS_FILES = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'];
const JS_FILES = ['**/*.js', '**/*.mjs', '**/*.cjs'];
const TEST_FILES = ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'];

/** Browser globals of the console (packages/console; no `globals` package needed). */
const browserGlobals = Object.fromEntries(
  [
    'window', 'document', 'navigator', 'location', 'history', 'sessionStorage', 'localStorage', 'fetch',
    'Response', 'Request', 'Headers', 'URL', 'URLSearchParams', 'AbortController', 'ResizeObserver',
    'HTMLElement', 'SVGElement', 'Event', 'KeyboardEvent', 'console', 'setTimeout', 'clearTimeout',
    'setInterval', 'clearInterval', 'requestAnimationFrame', 'cancelAnimationFrame', 'Intl',
  ].map((name) => [name, 'readonly']),
);

/** Node's globals for plain JavaScript files (no `globals` package needed). */
const nodeGlobals = Object.fromEntries(
  [
    'process', 'console', 'Buffer', 'URL', 'URLSearchParams', 'AbortController', 'AbortSignal',
    'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate',
    'queueMicrotask', 'structuredClone', 'fetch', 'performance', 'TextEncoder', 'TextDecoder',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  globalIgnores([
    '**/dist/**',
    '**/node_modules/**',
    '**/coverage/**',
    '**/*.d.ts',
    '**/*.tsbuildinfo',
    'bench/results/**',
  ]),

  // Every file: the core JavaScript rules.
  js.configs.recommended,
  {
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
      'prefer-const': 'error',
      'no-var': 'error',
    },
  },

  // TypeScript: type-aware rules.
  {
    files: TS_FILES,
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: repoRoot,
      },
    },
    plugins: { 'import-x': importX },
    settings: {
      // Resolve `@ax/*` through the root tsconfig's `paths` to the packages' sources, so a cycle
      // across packages is seen as one.
      'import-x/resolver-next': [
        createTypeScriptImportResolver({ project: `${repoRoot}tsconfig.json`, alwaysTryTypes: true }),
      ],
      'import-x/extensions': ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs'],
      // Workspace packages are ours: `no-cycle` must follow them (it skips external modules).
      'import-x/internal-regex': '^@ax/',
    },
    rules: {
      // Promises (CONVENTIONS habit 6: no floating promises).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // `async` functions that satisfy a Promise-returning interface need no `await`.
      '@typescript-eslint/require-await': 'off',

      // Imports (habit 10: `import type` for types, no cycles, no deep imports).
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports' },
      ],
      '@typescript-eslint/no-import-type-side-effects': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      'import-x/no-relative-packages': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@ax/[a-z-]+/',
              message: "Import a package through its index (`@ax/<name>`); no deep imports.",
            },
          ],
        },
      ],

      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
    },
  },

  // The web console runs in the browser (its own tsconfig: DOM, JSX); it has no logger to use.
  {
    files: ['packages/console/**/*.{ts,tsx}'],
    languageOptions: { globals: browserGlobals },
    rules: { 'no-console': 'error' },
  },

  // Production code logs through pino, never the console; CLIs may print.
  {
    files: ['packages/*/src/**/*.ts', 'services/*/src/**/*.ts'],
    ignores: [...TEST_FILES, '**/cli.ts', '**/cli/**'],
    rules: { 'no-console': 'error' },
  },

  // Tests: expect(obj.method) and mocks are fine.
  {
    files: TEST_FILES,
    rules: { '@typescript-eslint/unbound-method': 'off' },
  },

  // JavaScript (this file, scripts): no type information.
  {
    files: JS_FILES,
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: 'module', globals: nodeGlobals },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...nodeGlobals, require: 'readonly', module: 'writable', __dirname: 'readonly' } },
  },
);
