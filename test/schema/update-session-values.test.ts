import { describe, expect, it } from 'vitest';
import { BadUserInputError, UpstreamError } from '../../src/lib/errors.js';
import {
  checksumAlgorithm,
  requireSessionId,
  transferSourceType,
  transferStatus,
  upstreamDateTime,
  upstreamInt32,
  upstreamSafeInt,
  uriScheme,
} from '../../src/gateway/schema/update-sessions/values.js';

/** An UpstreamError UPSTREAM_INVALID_RESPONSE, with more fields when given. */
const invalidResponse = (fields: Record<string, unknown> = {}) =>
  expect.objectContaining({ name: UpstreamError.name, code: 'UPSTREAM_INVALID_RESPONSE', ...fields });

describe('update session value mapping', () => {
  it('reads the uri scheme of every supported kind of endpoint', () => {
    expect(uriScheme('https://files.example.com/a.ova')).toBe('https');
    expect(uriScheme('http://10.0.0.1:8080/x')).toBe('http');
    expect(uriScheme('file:///tmp/a.iso')).toBe('file');
    expect(uriScheme('ds:///vmfs/volumes/datastore1/iso/a b.iso')).toBe('ds');
    expect(uriScheme('  HTTPS://HOST/X')).toBe('https');
    expect(uriScheme('svn+ssh://h/x')).toBe('svn+ssh');
  });

  it('fails a uri without a scheme as an invalid upstream response', () => {
    expect(() => uriScheme('/vmfs/volumes/a.iso')).toThrow(invalidResponse());
    expect(() => uriScheme('://x')).toThrow(invalidResponse());
  });

  it('maps status, keeping unset as null and failing an unknown value without echoing it', () => {
    expect(transferStatus('READY')).toBe('READY');
    expect(transferStatus('transferring')).toBe('TRANSFERRING');
    expect(transferStatus(undefined)).toBeNull();
    expect(transferStatus(null)).toBeNull();
    expect(() => transferStatus('PAUSED')).toThrow(
      invalidResponse({ message: expect.not.stringContaining('PAUSED'), detail: expect.objectContaining({ value: 'PAUSED' }) }),
    );
  });

  it('reads the known source types and nothing else', () => {
    expect(transferSourceType('PUSH')).toBe('PUSH');
    expect(transferSourceType('PULL')).toBe('PULL');
    expect(transferSourceType('NONE')).toBe('NONE');
    expect(transferSourceType('COPY')).toBeUndefined();
  });

  it('defaults the checksum algorithm to SHA1 and accepts spelled-out names', () => {
    expect(checksumAlgorithm(undefined)).toBe('SHA1');
    expect(checksumAlgorithm(null)).toBe('SHA1');
    expect(checksumAlgorithm('')).toBe('SHA1');
    expect(checksumAlgorithm('MD5')).toBe('MD5');
    expect(checksumAlgorithm('SHA-256')).toBe('SHA256');
    expect(checksumAlgorithm('sha512')).toBe('SHA512');
    expect(() => checksumAlgorithm('SHA3_256')).toThrow(invalidResponse());
  });

  it('keeps numbers exact and in range', () => {
    expect(upstreamSafeInt(2 ** 33 + 7)).toBe(8_589_934_599);
    expect(upstreamSafeInt(null)).toBeNull();
    expect(() => upstreamSafeInt(2 ** 53)).toThrow(invalidResponse());
    expect(upstreamInt32(2)).toBe(2);
    expect(() => upstreamInt32(2 ** 31)).toThrow(invalidResponse());
  });

  it('parses date-times and rejects garbage', () => {
    expect(upstreamDateTime('2026-11-21T10:15:30+02:00')?.toISOString()).toBe('2026-11-21T08:15:30.000Z');
    expect(upstreamDateTime(undefined)).toBeNull();
    expect(() => upstreamDateTime('yesterday')).toThrow(invalidResponse());
  });

  it('refuses an empty or blank session id and passes others verbatim', () => {
    expect(() => requireSessionId('', 'id')).toThrow(BadUserInputError);
    expect(() => requireSessionId(' \t\n', 'id')).toThrow(BadUserInputError);
    expect(() => requireSessionId(undefined, 'id')).toThrow(BadUserInputError);
    expect(requireSessionId('abc:1', 'id')).toBe('abc:1');
    expect(requireSessionId(42, 'id')).toBe('42');
  });
});
