/** resumeAfter tokens: round trip, expiry, bounded size, and hostile input refused as BAD_USER_INPUT. */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BadUserInputError } from '../../src/lib/errors.js';
import { digestOf, filterKey } from '../../src/audit/live/records.js';
import { decodeResumeToken, encodeResumeToken, MAX_ENTRIES, TOKEN_VALIDITY_MS, type ResumePoint } from '../../src/audit/live/resume-token.js';
import { cutsAndChanges } from '../helpers/text-variants.js';

const now = Date.UTC(2026, 10, 22, 12, 0, 0);
const key = filterKey({ objectType: 'LOGIN', action: undefined });
/** A token's bytes before its checksum: what a forger edits. */
const payloadOf = (token: string) => Buffer.from(Buffer.from(token, 'base64url').subarray(0, -4));
/** Bytes sealed with their CRC-32 as the gateway seals them: forged, but not garbled. */
function sealed(payload: Buffer): string {
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(crc32(payload));
  return Buffer.concat([payload, checksum]).toString('base64url');
}
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
    const valid = encodeResumeToken({ filterKey: key, newest: now, floor: now - 60_000, issuedAt: now, delivered: entries(2) });
    expect(() => decodeResumeToken(valid, now)).not.toThrow();
    const bytes = payloadOf(valid);
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
      sealed(wrongVersion),
      sealed(badFilter),
      Buffer.alloc(40, 0xff).toString('base64url'),
      // Cut short right after the filter, and within the count of entries.
      sealed(bytes.subarray(0, 27 + key.length)),
      sealed(bytes.subarray(0, 27 + key.length + 1)),
    ];
    for (const token of hostile) expect(() => decodeResumeToken(token, now), token.slice(0, 30)).toThrow(BadUserInputError);
  });

  it('refuse every cut and every one-character change of an issued token, which could read as another filter or other records', () => {
    for (const filter of [key, filterKey({ objectType: 'LAUNCH', action: 'CREATE' })]) {
      const token = encodeResumeToken({ filterKey: filter, newest: now, floor: now - 60_000, issuedAt: now, delivered: entries(2) });
      expect(decodeResumeToken(token, now).filterKey).toBe(filter);
      const accepted = cutsAndChanges(token).filter((variant) => {
        try {
          decodeResumeToken(variant, now);
          return true;
        } catch (error) {
          expect((error as Error).message).toBe('resumeAfter is not a token this gateway issued.');
          return false;
        }
      });
      expect(accepted).toEqual([]);
    }
  });

  it('grow by the 4 bytes of their checksum only', () => {
    const token = encodeResumeToken({ filterKey: key, newest: now, floor: now - 60_000, issuedAt: now, delivered: entries(3) });
    // Version, three times, the filter's length and bytes, the count, 12 bytes an entry, the checksum.
    expect(Buffer.from(token, 'base64url')).toHaveLength(1 + 24 + 2 + key.length + 2 + 3 * 12 + 4);
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

  it('keep exactly MAX_ENTRIES entries as they are', () => {
    const delivered = entries(MAX_ENTRIES);
    const point = { filterKey: key, newest: now, floor: now - 60_000, issuedAt: now, delivered };
    expect(decodeResumeToken(encodeResumeToken(point), now)).toEqual(point);
  });

  it('refuse a token written with more entries than an issued one holds', () => {
    const point = { filterKey: key, newest: now, floor: now - 60_000, issuedAt: now, delivered: entries(MAX_ENTRIES + 1) };
    expect(() => decodeResumeToken(unboundedToken(point), now)).toThrow(/not a token this gateway issued/);
    expect(decodeResumeToken(unboundedToken({ ...point, delivered: entries(MAX_ENTRIES) }), now).delivered).toHaveLength(MAX_ENTRIES);
  });

  it('carry an entry newer than the newest time as the newest, and one too old for its field as the oldest it holds', () => {
    const longAgo = now - 50 * 24 * 3_600_000;
    const point = {
      filterKey: key,
      newest: now,
      floor: longAgo,
      issuedAt: now + 10,
      delivered: [
        { digest: digestOf('late'), timestamp: now + 5 },
        { digest: digestOf('old'), timestamp: longAgo },
      ],
    };
    expect(decodeResumeToken(encodeResumeToken(point), now).delivered.map((e) => e.timestamp)).toEqual([now, now - 0xffffffff]);
  });

  it('take times at the edges of what an issued token can hold', () => {
    const token = (fields: Partial<ResumePoint>) =>
      encodeResumeToken({ filterKey: key, newest: now, floor: now - 60_000, issuedAt: now, delivered: [], ...fields });
    const accepted = [
      token({ issuedAt: now + 60_000, newest: now }),
      token({ newest: now + 60_000 }),
      token({ floor: now + 1 }),
      token({ floor: now - 10, delivered: [{ digest: digestOf('x'), timestamp: now - 10 }] }),
      token({ issuedAt: now - TOKEN_VALIDITY_MS, newest: now - TOKEN_VALIDITY_MS, floor: now - TOKEN_VALIDITY_MS }),
    ];
    for (const edge of accepted) expect(() => decodeResumeToken(edge, now)).not.toThrow();
    const refused = [token({ issuedAt: now + 60_001 }), token({ newest: now + 60_001 })];
    for (const past of refused) expect(() => decodeResumeToken(past, now)).toThrow(/not a token this gateway issued/);
    expect(() => decodeResumeToken(token({ issuedAt: now - TOKEN_VALIDITY_MS - 1, newest: now - TOKEN_VALIDITY_MS - 1, floor: now - TOKEN_VALIDITY_MS - 1 }), now)).toThrow(
      'resumeAfter has expired (tokens are valid for 15 minutes); subscribe again, with `since` if needed.',
    );
  });

  it('refuse times that are not whole milliseconds', () => {
    const bytes = payloadOf(encodeResumeToken({ filterKey: key, newest: now, floor: now - 60_000, issuedAt: now, delivered: [] }));
    for (const [at, value] of [
      [1, now - 0.5],
      [9, now - 60_000.5],
      [17, now - 0.5],
    ] as const) {
      const forged = Buffer.from(bytes);
      forged.writeDoubleBE(value, at);
      expect(() => decodeResumeToken(sealed(forged), now), String(at)).toThrow(/not a token this gateway issued/);
    }
  });

  it('refuse characters outside base64url anywhere in the token, and tokens over 8192 characters', () => {
    const valid = encodeResumeToken({ filterKey: key, newest: now, floor: now, issuedAt: now, delivered: [] });
    for (const token of [`${valid}!`, `!${valid}`, `${valid.slice(0, 10)}=${valid.slice(10)}`, `${valid} `]) {
      expect(() => decodeResumeToken(token, now), token).toThrow(/not a token this gateway issued/);
    }
    // 6144 bytes are 8192 characters: the longest token read.
    const withFilterOf = (bytes: number) =>
      encodeResumeToken({ filterKey: JSON.stringify(['x'.repeat(bytes - 9), null]), newest: now, floor: now, issuedAt: now, delivered: [] });
    expect(withFilterOf(6111)).toHaveLength(8192);
    expect(decodeResumeToken(withFilterOf(6111), now).filterKey).toHaveLength(6111);
    expect(() => decodeResumeToken(withFilterOf(6114), now)).toThrow(/not a token this gateway issued/);
  });

  it('refuse a filter that is not a pair of strings or nulls', () => {
    const token = (filterKey: string) => encodeResumeToken({ filterKey, newest: now, floor: now, issuedAt: now, delivered: [] });
    expect(decodeResumeToken(token('[null,null]'), now).filterKey).toBe('[null,null]');
    expect(decodeResumeToken(token('["LOGIN","CREATE"]'), now).filterKey).toBe('["LOGIN","CREATE"]');
    for (const filter of ['["LOGIN"]', '["LOGIN",null,null]', '[1,null]', '["LOGIN",false]', '{"0":null,"1":null}', '"ab"', 'nul']) {
      expect(() => decodeResumeToken(token(filter), now), filter).toThrow(/not a token this gateway issued/);
    }
  });
});

/** A token in the issued format, without the bound on its entries that encodeResumeToken applies. */
function unboundedToken(point: ResumePoint): string {
  const filter = Buffer.from(point.filterKey);
  const head = Buffer.alloc(27);
  head.writeUInt8(2, 0);
  head.writeDoubleBE(point.newest, 1);
  head.writeDoubleBE(point.floor, 9);
  head.writeDoubleBE(point.issuedAt, 17);
  head.writeUInt16BE(filter.length, 25);
  const count = Buffer.alloc(2);
  count.writeUInt16BE(point.delivered.length);
  const entries = point.delivered.map((entry) => {
    const age = Buffer.alloc(4);
    age.writeUInt32BE(point.newest - entry.timestamp);
    return Buffer.concat([Buffer.from(entry.digest, 'base64url'), age]);
  });
  return sealed(Buffer.concat([head, filter, count, ...entries]));
}
