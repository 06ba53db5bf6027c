/** resumeAfter tokens: round trip, expiry, bounded size, and hostile input refused as BAD_USER_INPUT. */
import { describe, expect, it } from 'vitest';
import { BadUserInputError } from '../../src/errors.js';
import { digestOf, filterKey } from '../../src/live/records.js';
import { decodeResumeToken, encodeResumeToken, MAX_ENTRIES, TOKEN_VALIDITY_MS, type ResumePoint } from '../../src/live/resume-token.js';

const now = Date.UTC(2026, 10, 22, 12, 0, 0);
const key = filterKey({ objectType: 'LOGIN', action: undefined });
const entries = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ digest: digestOf(`uuid-${i}`), timestamp: now - 1000 + i }));

describe('resume tokens', () => {
  it('round-trip the resume point', () => {
    const point = { filterKey: key, newest: now, floor: now - 60_000, issuedAt: now, delivered: entries(3) };
    expect(decodeResumeToken(encodeResumeToken(point), now + 1000)).toEqual(point);
  });

  it('keep the newest entries past the bound and raise the floor above the rest', () => {
    const token = encodeResumeToken({ filterKey: key, newest: now, floor: now - 60_000, issuedAt: now, delivered: entries(MAX_ENTRIES + 10) });
    const point = decodeResumeToken(token, now);
    expect(point.delivered).toHaveLength(MAX_ENTRIES);
    expect(Math.min(...point.delivered.map((e) => e.timestamp))).toBeGreaterThanOrEqual(point.floor);
    expect(point.floor).toBe(now - 1000 + 10);
    expect(token.length).toBeLessThan(2200);
  });

  it('expire after 15 minutes', () => {
    const token = encodeResumeToken({ filterKey: key, newest: now, floor: now, issuedAt: now, delivered: [] });
    expect(() => decodeResumeToken(token, now + TOKEN_VALIDITY_MS - 1)).not.toThrow();
    expect(() => decodeResumeToken(token, now + TOKEN_VALIDITY_MS + 1)).toThrow(/expired/);
  });

  it('refuse anything else as BAD_USER_INPUT, never another error', () => {
    const valid = encodeResumeToken({ filterKey: key, newest: now, floor: now, issuedAt: now, delivered: entries(2) });
    const bytes = Buffer.from(valid, 'base64url');
    const wrongVersion = Buffer.from(bytes);
    wrongVersion[0] = 9;
    const badFilter = Buffer.from(bytes);
    badFilter[27] = 0x7b; // not a JSON array any more
    const hostile = [
      '',
      'x'.repeat(10_000),
      'not a token!',
      valid.slice(0, 20),
      `${valid}AAAA`,
      wrongVersion.toString('base64url'),
      badFilter.toString('base64url'),
      Buffer.alloc(40, 0xff).toString('base64url'),
    ];
    for (const token of hostile) expect(() => decodeResumeToken(token, now), token.slice(0, 30)).toThrow(BadUserInputError);
  });

  it('refuse times no issued token has, as malformed: the issue ahead of now, positions out of order', () => {
    const token = (fields: Partial<ResumePoint>) =>
      encodeResumeToken({ filterKey: key, newest: now, floor: now - 60_000, issuedAt: now, delivered: [], ...fields });
    const outOfOrder = [
      token({ issuedAt: now + 3_600_000 }),
      token({ newest: now + 3_600_000, floor: now }),
      token({ floor: now + 2 }),
      token({ floor: now - 10, delivered: [{ digest: digestOf('x'), timestamp: now - 20 }] }),
    ];
    for (const forged of outOfOrder) expect(() => decodeResumeToken(forged, now)).toThrow(/not a token this gateway issued/);
    // A clock a little behind the issuing instance's still takes its tokens.
    expect(() => decodeResumeToken(token({ issuedAt: now + 30_000 }), now)).not.toThrow();
  });

  it('refuse a filter spelled otherwise than the gateway spells it', () => {
    const token = (filterKey: string) => encodeResumeToken({ filterKey, newest: now, floor: now, issuedAt: now, delivered: [] });
    expect(() => decodeResumeToken(token('["LOGIN",null]'), now)).not.toThrow();
    for (const spelling of ['[ "LOGIN", null ]', '["LOGIN",null] ', '["\\u004cOGIN",null]']) {
      expect(() => decodeResumeToken(token(spelling), now), spelling).toThrow(BadUserInputError);
    }
  });
});
