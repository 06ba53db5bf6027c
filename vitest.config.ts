import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One graphql instance, the CommonJS build Node itself loads: vite would otherwise pick the
    // `module` entry for our code while dependencies load `main` ("from another module or realm").
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
    pool: 'forks',
    // Most files wait on servers, processes and timers rather than on a core: three at a time
    // finish in a little over half the time of vitest's default (cores - 1, one file on 2 cores).
    maxWorkers: 3,
  },
});
