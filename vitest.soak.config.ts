import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/** `npm run test:soak`: the attacks at full size against the real entry point, minutes rather than seconds. */
export default mergeConfig(
  { ...base, test: { ...base.test, projects: undefined } },
  defineConfig({ test: { include: ['test/soak/**/*.test.ts'], testTimeout: 300_000, hookTimeout: 120_000, maxWorkers: 1 } }),
);
