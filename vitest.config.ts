import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/**
 * The start-up tests spawn processes and mostly wait on them: they run in a project of their own,
 * which vitest starts before the others (isolated projects first), so the longest file never
 * begins last. The heavier process tests (the build, Hive Gateway, the README's upstream mode, the
 * browser, replicas as processes, fuzzing the entry point at full size) are in the soak suite.
 */
const PROCESS_TESTS = ['test/startup.test.ts'];

/**
 * Files that fake timers for whole tests, or spy on a faked timer, run isolated: in the shared
 * workers, a fake `setTimeout` left behind (by a spy restored after the fake was removed, say) stops
 * every later file's timers in that worker. A file that fakes `Date` alone, or fakes timers only
 * inside a `try` whose `finally` restores them, stays shared: importing the gateway again in a worker
 * of its own costs more than its tests.
 */
const FAKE_TIMER_TESTS = ['test/live/stall-watch.test.ts', 'test/live/subscriber-units.test.ts', 'test/live/poller-units.test.ts'];

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
    // Removes the production build the process tests make on first use (test/helpers/built-gateway.ts).
    globalSetup: ['test/helpers/built-gateway.ts'],
    pool: 'forks',
    // Most files wait on servers, processes and timers rather than on a core: three at a time
    // finish in a little over half the time of vitest's default (cores - 1, one file on 2 cores).
    maxWorkers: 3,
    projects: [
      // Three start-ups at a time keep both cores busy without starving the other files' servers.
      { extends: true, test: { name: 'processes', include: PROCESS_TESTS, maxConcurrency: 3 } },
      { extends: true, test: { name: 'fake-timers', include: FAKE_TIMER_TESTS } },
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          // The soak suite (npm run test:soak, vitest.soak.config.ts) runs the attacks at full size.
          exclude: [...PROCESS_TESTS, ...FAKE_TIMER_TESTS, 'test/soak/**'],
          // Importing graphql, Yoga, Pothos and the schema once per worker instead of once per file
          // halves the suite's CPU time. No file mocks modules, stubs globals or leaves process
          // listeners behind, and vitest restores spies between files. The one process-wide
          // registration, OpenTelemetry's context manager and propagator (createTracing), is the
          // same for every caller, and only gateways with tracing on read it.
          isolate: false,
        },
      },
    ],
  },
});
