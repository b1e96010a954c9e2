// @ts-check
// Lint: ESLint's and typescript-eslint's recommended sets with type
// information, minus the rules that are only noise on this codebase (each
// deviation says why). Formatting is Prettier's alone (eslint-config-prettier
// last). Type-aware rules see `mailroom/...` self-imports through dist/*.d.ts,
// so run `npm run build` before `npm run lint`.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores([
    'dist/',
    // A template that pack-check copies into a scratch project and compiles there.
    'test/pack/project/',
    // The mail corpus's sources, as their frameworks ship them, built in a scratch folder (scripts/build-mail-corpus.ts).
    'fixtures/mail-corpus/sources/',
    'playwright-report/',
    'test-results/',
    'blob-report/',
    '.tmp/',
  ]),
  {
    // A stale `eslint-disable` fails the lint instead of lingering.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The two programs by name rather than projectService (which opens a
        // language service and looks up each file's tsconfig): the same
        // type information in 28 CPU s against 32.5.
        project: ['./tsconfig.json', './src/server/ui/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // On by name because this code is asynchronous throughout (both are in recommendedTypeChecked too).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Off: `async` without `await` is how this code implements Promise-returning callbacks and interfaces (inspect, list, deleteMessage), turning throws into rejections.
      '@typescript-eslint/require-await': 'off',
      // errors.ts merges `interface X extends Omit<…> {}` into class X on purpose, so the class carries the fields.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      // Playwright fixtures must destructure `{}` as their first parameter (Playwright reads the parameter list).
      'no-empty-pattern': ['error', { allowObjectPatternsAsParameters: true }],
      // The preset's options, plus Node's global URLSearchParams (the preset allows only the DOM lib's), which stringifies to a query.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowAny: true,
          allowBoolean: true,
          allowNullish: true,
          allowNumber: true,
          allowRegExp: true,
          allow: [
            { from: 'lib', name: ['Error', 'URL', 'URLSearchParams'] },
            { from: 'package', package: 'url', name: 'URLSearchParams' },
          ],
        },
      ],
    },
  },
  {
    // Tests read the HTTP API's JSON as `any` on purpose (test/server/helpers.ts) and
    // check its shape with expect(); type-level tests (*.check.ts) hold ill-typed
    // lines under @ts-expect-error. The no-unsafe-* rules only flag that.
    files: ['test/**', '**/*.check.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Not in tsconfig.json (this file, any .js/.cjs/.mjs): lint without type information.
    files: ['**/*.{js,cjs,mjs}'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // CommonJS files (Jest's configs and CommonJS tests): Node's module scope, and `require`.
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly', console: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
