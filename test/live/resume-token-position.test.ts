/**
 * resumeAfter tokens with a shared stream position (replicas sharing Redis): the position travels
 * with the token, a token without one reads as before, and a forged position is BAD_USER_INPUT.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { digestOf, filterKey } from '../../src/audit/live/records.js';
import { decodeResumeToken, encodeResumeToken, type ResumePoint } from '../../src/audit/live/resume-token.js';

const now = Date.UTC(2026, 10, 22, 12, 0, 0);
const point: ResumePoint = {
  filterKey: filterKey({ objectType: 'LOGIN' }),
  newest: now,
  floor: now - 60_000,
  issuedAt: now,
  delivered: [{ digest: digestOf('uuid-1'), timestamp: now - 10 }],
};
const payloadOf = (token: string) => Buffer.from(Buffer.from(token, 'base64url').subarray(0, -4));
function sealed(payload: Buffer): string {
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(crc32(payload));
  return Buffer.concat([payload, checksum]).toString('base64url');
}

describe('resume tokens with a stream position', () => {
  it('carry the position of the stream entry they were issued after', () => {
    const withPosition = { ...point, position: '1764300000123-7' };
    expect(decodeResumeToken(encodeResumeToken(withPosition), now)).toEqual(withPosition);
  });

  it('without a position are the tokens of a gateway on its own, as they were', () => {
    const token = encodeResumeToken(point);
    expect(Buffer.from(token, 'base64url')[0]).toBe(2);
    expect(decodeResumeToken(token, now)).toEqual(point);
  });

  it('are refused when the position is not a stream id, or the bytes after it do not add up', () => {
    const payload = payloadOf(encodeResumeToken({ ...point, position: '1764300000123-7' }));
    const forged = Buffer.from(payload);
    forged.write('x', payload.length - 1, 'latin1');
    expect(() => decodeResumeToken(sealed(forged), now)).toThrow(/not a token this gateway issued/);
    expect(() => decodeResumeToken(sealed(Buffer.concat([payload, Buffer.from('0')])), now)).toThrow(/not a token this gateway issued/);
    expect(() => decodeResumeToken(sealed(payload.subarray(0, -3)), now)).toThrow(/not a token this gateway issued/);
    const versionTwo = Buffer.from(payload);
    versionTwo[0] = 2;
    expect(() => decodeResumeToken(sealed(versionTwo), now)).toThrow(/not a token this gateway issued/);
  });
});
