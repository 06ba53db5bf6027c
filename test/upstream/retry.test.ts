/** The retry policy's arithmetic. */
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  defaultRetryPolicy,
  errorCodeOf,
  isRetryableConnectionError,
  retryAfterMs,
} from '../../src/upstream/retry.js';

describe('retry policy', () => {
  it('backs off exponentially with jitter in [ceiling/2, ceiling], capped', () => {
    const policy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffMs(0, policy, () => 0)).toBe(50);
    expect(backoffMs(0, policy, () => 1)).toBe(100);
    expect(backoffMs(2, policy, () => 0.5)).toBe(300);
    expect(backoffMs(10, policy, () => 1)).toBe(1000);
    expect(defaultRetryPolicy.maxRetries).toBeGreaterThan(0);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it('repeats a POST only when the request cannot have been sent', () => {
    expect(isRetryableConnectionError('ECONNRESET', 'GET')).toBe(true);
    expect(isRetryableConnectionError('ECONNRESET', 'POST')).toBe(false);
    expect(isRetryableConnectionError('ECONNREFUSED', 'POST')).toBe(true);
    expect(isRetryableConnectionError(undefined, 'GET')).toBe(false);
    expect(errorCodeOf(new Error('x', { cause: Object.assign(new Error('y'), { code: 'ECONNREFUSED' }) }))).toBe(
      'ECONNREFUSED',
    );
  });
});
