/** What every fuzzed answer must be: JSON with data or errors, each error with a contract code. */
import { expect } from 'vitest';
import { CONTRACT_CODES } from './arbitraries.js';

export interface Answer {
  readonly status: number;
  readonly body: { data?: unknown; errors?: { message?: unknown; extensions?: { code?: unknown } }[] };
}

/** The answer is JSON with data or errors, and every error has a contract code. */
export function expectContractAnswer({ status, body }: Answer, sent: unknown): void {
  const context = JSON.stringify(sent).slice(0, 2000);
  expect(status, context).toBeLessThan(500);
  expect('data' in body || 'errors' in body, context).toBe(true);
  for (const error of body.errors ?? []) {
    expect(typeof error.message, context).toBe('string');
    expect(CONTRACT_CODES.has(String(error.extensions?.code)), `${String(error.extensions?.code)}: ${String(error.message)} for ${context}`).toBe(true);
  }
}
