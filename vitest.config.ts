// Three projects, chosen by path so that a new test file falls into one without editing this:
//   unit         src/**/*.test.ts except src/**/redis-*.test.ts: in-process only (no Redis, no
//                child process, no browser); `npm run test:unit`, the fast loop.
//   integration  test/**/*.test.ts and src/**/redis-*.test.ts, except the system files: real
//                Redis and real loopback servers, in-process.
//   system       child processes and the browser: test/system/**, test/cli/**, test/web/**,
//                test/scale/cluster.test.ts and test/**/*shutdown*.test.ts. They run the build
//                that ships (dist/), made once per run by test/support/build-once.ts.
// `npm test` runs all three. See docs/testing.md.
import { defineConfig } from 'vitest/config';

const REDIS_UNIT_FILES = 'src/**/redis-*.test.ts';
const SYSTEM_FILES = [
  'test/system/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/web/**/*.test.ts',
  'test/scale/cluster.test.ts',
  'test/**/*shutdown*.test.ts',
];

export default defineConfig({
  test: {
    setupFiles: ['test/support/no-internet.ts', 'test/support/isolated-lists.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        // Worker threads start faster than forked processes, and nothing here needs its own process.
        // No isolation: files share a worker's module graph (each import is evaluated once per
        // worker, not once per file), which halves the loop; a unit test therefore keeps no
        // state in module scope that another file could see, and restores any global it changes.
        // Three workers on two cores: much of the unit time is tests waiting on short real
        // deadlines, not CPU, so one more worker than cores keeps both busy (about 12 s wall).
        // A worker count of its own needs a group of its own: `npm test` runs the unit group
        // first, then integration and system together.
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          exclude: [REDIS_UNIT_FILES],
          pool: 'threads',
          isolate: false,
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts', REDIS_UNIT_FILES],
          exclude: SYSTEM_FILES,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        // A minute per test: a browser or a child process is slow on a loaded machine, and each of
        // their steps has a deadline of its own that names it (this is only the net under them).
        test: {
          name: 'system',
          include: SYSTEM_FILES,
          globalSetup: ['test/support/build-once.ts'],
          testTimeout: 60_000,
          hookTimeout: 90_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
