/**
 * What a client reads when the content library sends a value the contract cannot represent
 * (src/gateway/schema/update-sessions/values.ts): the exact error message, the service it names, and what
 * goes to the log; the edges of the number ranges and of the session id. The mapping of ordinary
 * values: update-session-values.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { BadUserInputError, UpstreamError } from '../../src/lib/errors.js';
import {
  checksumAlgorithm,
  MAX_SESSION_ID_LENGTH,
  requireSessionId,
  transferStatus,
  upstreamDateTime,
  upstreamInt32,
  upstreamSafeInt,
  uriScheme,
} from '../../src/gateway/schema/update-sessions/values.js';

/** The error `run` throws. */
function thrown(run: () => unknown): UpstreamError & { detail?: Record<string, unknown> } {
  try {
    run();
  } catch (error) {
    return error as UpstreamError;
  }
  throw new Error('expected an error');
}

const refusal = (what: string, value: unknown) => ({
  name: 'UpstreamError',
  code: 'UPSTREAM_INVALID_RESPONSE',
  service: 'content-library',
  message: `The content library service sent ${what} this gateway cannot represent.`,
  detail: { service: 'content-library', value },
});

describe('values the contract cannot represent', () => {
  it.each([
    ['a file status', () => transferStatus('PAUSED'), 'PAUSED'],
    ['a checksum algorithm', () => checksumAlgorithm('CRC32'), 'CRC32'],
    ['an endpoint uri without a scheme', () => uriScheme('/vmfs/a.iso'), '/vmfs/a.iso'],
    ['a date-time', () => upstreamDateTime('yesterday'), 'yesterday'],
    ['a number outside the 32-bit range', () => upstreamInt32(2 ** 31), 2 ** 31],
    ['a number outside the 32-bit range', () => upstreamInt32(-(2 ** 31) - 1), -(2 ** 31) - 1],
    ['a number outside the 32-bit range', () => upstreamInt32(1.5), 1.5],
    ['an integer outside the safe range', () => upstreamSafeInt(2 ** 53), 2 ** 53],
    ['an integer outside the safe range', () => upstreamSafeInt(0.5), 0.5],
  ])('names %s in the message, the value only in the log detail', (what, run, value) => {
    expect(thrown(run)).toMatchObject(refusal(what, value));
  });

  it('logs at most 200 characters of a text value, and a number as it is', () => {
    const long = `${'a'.repeat(199)}bcdef`;
    expect(thrown(() => uriScheme(long)).detail).toEqual({ service: 'content-library', value: `${'a'.repeat(199)}b` });
    expect(thrown(() => upstreamInt32(12345.5)).detail).toEqual({ service: 'content-library', value: 12345.5 });
    expect(thrown(() => transferStatus(long)).detail?.value).toBe(`${'a'.repeat(199)}b`);
  });
});

describe('edges of the accepted values', () => {
  it('reads a status or algorithm with spaces around it', () => {
    expect(transferStatus('  ready \n')).toBe('READY');
    expect(checksumAlgorithm(' sha256 ')).toBe('SHA256');
  });

  it('reads a blank checksum algorithm as unset: SHA1', () => {
    expect(checksumAlgorithm('   ')).toBe('SHA1');
    expect(checksumAlgorithm('\t')).toBe('SHA1');
  });

  it('keeps unset numbers null and takes every 32-bit integer, -2^31 to 2^31 - 1', () => {
    expect(upstreamInt32(null)).toBeNull();
    expect(upstreamInt32(undefined)).toBeNull();
    expect(upstreamInt32(0)).toBe(0);
    expect(upstreamInt32(2 ** 31 - 1)).toBe(2 ** 31 - 1);
    expect(upstreamInt32(-(2 ** 31 - 1))).toBe(-(2 ** 31 - 1));
    expect(upstreamInt32(-(2 ** 31))).toBe(-(2 ** 31));
    expect(upstreamSafeInt(undefined)).toBeNull();
    expect(upstreamSafeInt(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('refuses an empty session id naming the argument, and one over 1024 characters', () => {
    expect(() => requireSessionId('', 'sessionId')).toThrow(
      expect.objectContaining({ name: BadUserInputError.name, message: 'sessionId must be a non-empty update session id.' }),
    );
    expect(() => requireSessionId(null, 'ids[2]')).toThrow('ids[2] must be a non-empty update session id.');
    expect(MAX_SESSION_ID_LENGTH).toBe(1024);
    const longest = 'i'.repeat(1024);
    expect(requireSessionId(longest, 'id')).toBe(longest);
    expect(() => requireSessionId(`${longest}i`, 'sessionId')).toThrow(
      expect.objectContaining({ name: BadUserInputError.name, message: 'sessionId must be at most 1024 characters long.' }),
    );
  });
});
