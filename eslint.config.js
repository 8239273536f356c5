// Lint rules enforce what the house style asks: no `any`, no non-null `!`, no floating promises.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The dependency rule (docs/architecture.md): which top-level folders of src/ each folder's
// production code must not import. `root` is src/*.ts (composition root, app, entry points).
// Test files are exempt: they wire real adapters around the part they test.
const ROOT_FILES = ['composition', 'app', 'server', 'cluster', 'api-contract', 'spamblocker-configs'];
const FORBIDDEN_IMPORTS = {
  domain: ['infra', 'sources', 'http', 'config', 'cli', 'root'],
  infra: ['sources', 'http', 'config', 'cli', 'root'],
  sources: ['http', 'cli', 'root'],
  http: ['sources', 'config', 'cli', 'root'],
  config: ['domain', 'infra', 'sources', 'http', 'cli', 'root'],
  cli: ['http'],
};

// Imports are relative, so a folder is recognised by how many `../` reach src/ from the
// importing file: one files block per folder and depth (src/<folder>/ nests at most 4 deep).
function dependencyRuleBlocks() {
  return Object.entries(FORBIDDEN_IMPORTS).flatMap(([folder, forbidden]) => {
    const folders = forbidden.filter((name) => name !== 'root');
    const targets = [
      ...(folders.length > 0 ? [`(${folders.join('|')})/`] : []),
      ...(forbidden.includes('root') ? [`(${ROOT_FILES.join('|')})\\.js$`] : []),
    ];
    return [1, 2, 3, 4].map((depth) => ({
      files: [`src/${folder}/${'*/'.repeat(depth - 1)}*.ts`],
      ignores: ['**/*.test.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: targets.map((target) => ({
              regex: `^(\\.\\./){${depth}}${target}`,
              message: `src/${folder} must not import that folder (the dependency rule in docs/architecture.md).`,
            })),
          },
        ],
      },
    }));
  });
}

/** The dependency rule's config blocks, exported for src/dependency-rule.test.ts. */
export const dependencyRuleConfigs = [
  ...dependencyRuleBlocks(),
  {
    // The composition root and entry points in src/*.ts may use every layer but the CLI, which uses them.
    files: ['src/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\./cli/',
              message: 'src/*.ts must not import src/cli (the dependency rule in docs/architecture.md).',
            },
          ],
        },
      ],
    },
  },
];

export default tseslint.config(
  // examples/ is type-checked by test/http/openapi-document.test.ts, against types generated from the served document.
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'test-artifacts/', 'src/web/static/', 'bin/', 'examples/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
    },
  },
  {
    // harness/ is shared by the tests and the benches: plain functions, never Vitest.
    files: ['harness/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'vitest',
              message:
                'harness/ holds plain functions shared with the benches: put hooks and expect helpers in test/support/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts', 'harness/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'AbortSignal',
          property: 'any',
          message:
            'AbortSignal.any() leaves a WeakRef on each source signal for good on Node 20 and 26 (a leak when a source lives long): use anySignal() from src/domain/abort-signals.ts and release it.',
        },
      ],
    },
  },
  ...dependencyRuleConfigs,
  // Plain JavaScript loaded by hand into a process (bench/support/heap-probe.mjs): linted without types.
  { files: ['eslint.config.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
