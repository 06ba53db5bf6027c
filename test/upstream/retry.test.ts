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
    expect(retryAfterMs([' 4 ', '9'], now)).toBe(4000);
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('', now)).toBeUndefined();
    expect(retryAfterMs('  ', now)).toBeUndefined();
  });

  it('never reads a number from a Retry-After that only contains one', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('2 days', now)).toBeUndefined();
    // Date.parse reads "x 2" as a date in 2001: long past, so no wait; never NaN.
    expect(retryAfterMs('x 2', now)).toBe(0);
  });

  it.each([
    ['ECONNRESET', true],
    ['ECONNREFUSED', true],
    ['EPIPE', true],
    ['ETIMEDOUT', true],
    ['ENOTFOUND', true],
    ['EAI_AGAIN', true],
    ['ENETDOWN', true],
    ['ENETUNREACH', true],
    ['EHOSTDOWN', true],
    ['EHOSTUNREACH', true],
    ['UND_ERR_SOCKET', true],
    ['UND_ERR_CONNECT_TIMEOUT', true],
    ['UND_ERR_CLOSED', true],
    ['UND_ERR_HEADERS_TIMEOUT', false],
    ['UND_ERR_ABORTED', false],
    ['EACCES', false],
  ])('a GET failing with %s is retried: %s', (code, retried) => {
    expect(isRetryableConnectionError(code, 'GET')).toBe(retried);
  });

  it.each(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETDOWN', 'ENETUNREACH', 'EHOSTDOWN', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])(
    'a POST failing with %s was never sent, so it is retried',
    (code) => {
      expect(isRetryableConnectionError(code, 'POST')).toBe(true);
    },
  );

  it('finds the code on the error or up to two causes deep, strings only', () => {
    const withCode = (code: unknown, cause?: unknown) => Object.assign(new Error('x', { cause }), { code });
    expect(errorCodeOf(withCode('EPIPE'))).toBe('EPIPE');
    expect(errorCodeOf(withCode(undefined, withCode(undefined, withCode('EPIPE'))))).toBe('EPIPE');
    expect(errorCodeOf(withCode(undefined, withCode(undefined, withCode(undefined, withCode('EPIPE')))))).toBeUndefined();
    expect(errorCodeOf(withCode(-32, withCode('EPIPE')))).toBe('EPIPE');
    expect(errorCodeOf(undefined)).toBeUndefined();
    expect(errorCodeOf('ECONNRESET')).toBeUndefined();
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
