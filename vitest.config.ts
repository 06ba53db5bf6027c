import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/**
 * Files that change process-wide state and so run each in a fresh worker: createTracing registers
 * OpenTelemetry's global context manager and propagator, which would follow the worker into the
 * files after it. startup.test.ts only spawns processes; isolated files run first, so the longest
 * file starts at once.
 */
const ISOLATED = [
  'test/startup.test.ts',
  'test/server/observability.test.ts',
  'test/server/tracing-upstream.test.ts',
  'test/federation/hive-router.test.ts',
];

export default defineConfig({
  resolve: {
    // One graphql instance, the CommonJS build Node itself loads: vite would otherwise pick the
    // `module` entry for our code while dependencies load `main` ("from another module or realm").
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
    pool: 'forks',
    // Most files wait on servers, processes and timers rather than on a core: three at a time
    // finish in a little over half the time of vitest's default (cores - 1, one file on 2 cores).
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: ISOLATED,
          // Importing graphql, Yoga, Pothos and the schema once per worker instead of once per file
          // roughly halves the suite's CPU time. These files keep no state outside what they
          // create and close (no module mocks, stubbed globals or process listeners left behind);
          // vitest restores spies between files.
          isolate: false,
        },
      },
    ],
  },
});
