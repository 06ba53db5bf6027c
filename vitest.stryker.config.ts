import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run mutation`: the default suite with room for Stryker's coverage instrumentation, which
 * makes the tests that scan large bodies several times slower than in `npm test`.
 */
export default mergeConfig(base, defineConfig({ test: { testTimeout: 120_000, hookTimeout: 120_000 } }));
