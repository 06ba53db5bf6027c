import { expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/lib/config.js';

/** The problems loadConfig refuses `env` with; fails the test if it does not refuse it. */
export function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}
