/** The sealed tokens behind cursors and resume tokens: what opens, and every other spelling that does not. */
import { describe, expect, it } from 'vitest';
import { CHECKSUM_BYTES, openToken, sealToken } from '../src/lib/checked-token.js';

const seal = (payload: Buffer) => {
  const buffer = Buffer.alloc(payload.length + CHECKSUM_BYTES);
  payload.copy(buffer);
  return sealToken(buffer, payload.length);
};

describe('checked tokens', () => {
  it('open to the payload they sealed, an empty one included', () => {
    const payload = Buffer.from([1, 2, 3, 250, 0, 7]);
    expect(openToken(seal(payload), 100)).toEqual(payload);
    expect(openToken(seal(Buffer.alloc(0)), 100)).toEqual(Buffer.alloc(0));
  });

  it('refuse a token past the length bound, shorter than its checksum, or altered in one character', () => {
    const token = seal(Buffer.from('cursor payload'));
    expect(openToken(token, token.length - 1)).toBeUndefined();
    expect(openToken(token.slice(0, 4), 100)).toBeUndefined();
    expect(openToken('', 100)).toBeUndefined();
    const altered = `${token.slice(0, 3)}${token[3] === 'A' ? 'B' : 'A'}${token.slice(4)}`;
    expect(openToken(altered, 100)).toBeUndefined();
  });

  it('refuse every other spelling of the same bytes: padding, base64 characters, foreign ones, spare bits', () => {
    // 0xfb 0xff encode as "-_": in base64 they would be "+/". Eight bytes leave two spare bits.
    const token = seal(Buffer.from([0xfb, 0xff, 0xfe, 9]));
    expect(token.startsWith('-_')).toBe(true);
    expect(token).toHaveLength(11);
    const spellings = [
      `${token}=`,
      `+/${token.slice(2)}`,
      `${token.slice(0, 2)} ${token.slice(2)}`,
      `${token.slice(0, 2)}.${token.slice(2)}`,
    ];
    // The last character carries bits the bytes do not use: flipping one spells the same bytes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBytes = [...alphabet]
      .map((c) => token.slice(0, -1) + c)
      .filter((t) => t !== token && Buffer.from(t, 'base64url').equals(Buffer.from(token, 'base64url')));
    expect(sameBytes.length).toBeGreaterThan(0);
    for (const spelling of [...spellings, ...sameBytes]) expect(openToken(spelling, 100), spelling).toBeUndefined();
  });
});
