/** The pure parts of auditEvents: cursor codec, argument checks, values readings. */
import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BadUserInputError } from '../../src/lib/errors.js';
import { cursorEncoder, decodeCursor, encodeCursor } from '../../src/audit/paging/cursor.js';
import { planPage, type PagePlan, type ReadPlan } from '../../src/audit/paging/page.js';
import { authMethodLabels, booleanValue, stringValue } from '../../src/gateway/schema/audit/record-types.js';
import type { AuditScope } from '../../src/audit/paging/cursor.js';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 21, 10, 15, 30, 123);
const scope: AuditScope = { fromMillis: NOW - 72 * HOUR, toMillis: NOW, pinnedAt: NOW, objectType: 'LOGIN', action: null };

/** A BadUserInputError whose message contains `message`. */
const badInput = (message: string) =>
  expect.objectContaining({ name: BadUserInputError.name, code: 'BAD_USER_INPUT', message: expect.stringContaining(message) });

describe('cursor codec', () => {
  it('round-trips offset and scope, and is opaque base64url', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 2 ** 40 }),
        fc.integer({ min: 0, max: 10 * HOUR }),
        fc.integer({ min: 0, max: 10 * HOUR }),
        fc.option(fc.string({ minLength: 1, maxLength: 100 }), { nil: null }),
        fc.constantFrom(null, 'Create', 'Update', 'Delete', 'Link', 'Unlink' as const),
        (offset, span, lag, objectType, action) => {
          const s: AuditScope = { fromMillis: NOW - span, toMillis: NOW, pinnedAt: NOW + lag, objectType, action };
          const text = encodeCursor({ offset, scope: s });
          expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(decodeCursor(text, 'after')).toEqual({ offset, scope: s });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('encodes a page of cursors like single cursors', () => {
    const at = cursorEncoder(scope);
    expect(at(41)).toBe(encodeCursor({ offset: 41, scope }));
  });

  it('is short: about 26 characters without an objectType, whatever the offset', () => {
    const plain: AuditScope = { ...scope, objectType: null };
    // 4 bytes of checksum are at most 6 characters over the 20 and 27 of a cursor without one.
    expect(encodeCursor({ offset: 4999, scope: plain }).length).toBeLessThanOrEqual(26);
    expect(encodeCursor({ offset: 4999, scope }).length).toBeLessThanOrEqual(33);
  });

  it('pins windows at the ends of the DateTime range exactly', () => {
    const wide: AuditScope = { fromMillis: -8.64e15, toMillis: 8.64e15, pinnedAt: 8.64e15, objectType: 'ü名', action: 'Unlink' };
    expect(decodeCursor(encodeCursor({ offset: 2 ** 48, scope: wide }), 'after')).toEqual({ offset: 2 ** 48, scope: wide });
  });

  /** A cursor's bytes: version, offset, flags, zigzag from, to - from, pin - to, objectType, then their CRC-32. */
  const raw = (...parts: (number | number[] | string)[]) => {
    const bytes = Buffer.concat(
      parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(Array.isArray(part) ? part : [part]))),
    );
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32BE(crc32(bytes));
    return Buffer.concat([bytes, checksum]).toString('base64url');
  };
  const varint = (value: number | bigint) => {
    const bytes: number[] = [];
    let rest = BigInt(value);
    while (rest >= 0x80n) {
      bytes.push(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    bytes.push(Number(rest));
    return bytes;
  };
  const FROM = varint(2 * (NOW - HOUR));
  const SPAN = varint(HOUR);

  it('reads the bytes it is made of', () => {
    expect(decodeCursor(raw(3, varint(7), 0x08 | 2, FROM, SPAN, 0, 'LOGIN'), 'after')).toEqual({
      offset: 7,
      scope: { fromMillis: NOW - HOUR, toMillis: NOW, pinnedAt: NOW, objectType: 'LOGIN', action: 'Update' },
    });
  });

  it.each([
    ['empty', ''],
    ['not base64url', 'abc+/='],
    ['base64url with padding', `${raw(3, 0, 0, FROM, SPAN, 0)}=`],
    ['too short', raw(3, 0, 0, FROM)],
    ['wrong version', raw(1, 0, 0, FROM, SPAN, 0)],
    ['the JSON of version 1', Buffer.from(`[1,0,${NOW - 1},${NOW},${NOW},null,null]`).toString('base64url')],
    ['offset past the largest position', raw(3, varint(2 ** 48 + 1), 0, FROM, SPAN, 0)],
    ['non-canonical varint', raw(3, [0x80, 0x00], 0, FROM, SPAN, 0)],
    ['endless varint', raw(3, Array.from({ length: 12 }, () => 0xff))],
    ['unknown action', raw(3, 0, 6, FROM, SPAN, 0)],
    ['unknown flag', raw(3, 0, 0x10, FROM, SPAN, 0)],
    ['objectType flag without one', raw(3, 0, 0x08, FROM, SPAN, 0)],
    ['objectType without its flag', raw(3, 0, 0, FROM, SPAN, 0, 'LOGIN')],
    ['objectType not UTF-8', raw(3, 0, 0x08, FROM, SPAN, 0, [0xff, 0xfe])],
    ['objectType too long', raw(3, 0, 0x08, FROM, SPAN, 0, 'x'.repeat(101))],
    ['from before the DateTime range', raw(3, 0, 0, varint(2n * 8_640_000_000_000_000n + 1n), 0, 0)],
    ['pin after the DateTime range', raw(3, 0, 0, FROM, SPAN, varint(8.64e15))],
    ['too long', 'A'.repeat(700)],
  ])('rejects a malformed cursor: %s', (_name, text) => {
    expect(() => decodeCursor(text, 'before')).toThrow(badInput('`before` is not a valid auditEvents cursor'));
  });

  /** The bytes the gateway issues for `offset` in `s`, written out field by field. */
  const issued = (offset: number, s: AuditScope) => {
    const action = s.action === null ? 0 : ['Create', 'Update', 'Delete', 'Link', 'Unlink'].indexOf(s.action) + 1;
    const from = BigInt(s.fromMillis);
    return raw(
      3,
      varint(offset),
      action | (s.objectType === null ? 0 : 0x08),
      varint(from >= 0n ? 2n * from : -2n * from - 1n),
      varint(BigInt(s.toMillis) - from),
      varint(BigInt(s.pinnedAt) - BigInt(s.toMillis)),
      s.objectType ?? [],
    );
  };

  it('spells each cursor one way, so cursors issued earlier stay valid', () => {
    const update: AuditScope = { fromMillis: NOW - HOUR, toMillis: NOW, pinnedAt: NOW, objectType: 'LOGIN', action: 'Update' };
    expect(encodeCursor({ offset: 7, scope: update })).toBe(raw(3, 7, 0x08 | 2, FROM, SPAN, 0, 'LOGIN'));
    expect(cursorEncoder(update)(300)).toBe(raw(3, [0xac, 0x02], 0x08 | 2, FROM, SPAN, 0, 'LOGIN'));
  });

  // Each varint gains a byte at 2^7, 2^14, ...: values on both sides of every step, in every field.
  const steps = [0, 1, 63, 64, 127, 128, 129, 255, 16_383, 16_384, 2 ** 21 - 1, 2 ** 21, 2 ** 28, 2 ** 35, 2 ** 42, 2 ** 48];
  it.each(steps)('round-trips %d in every field, spelled in as few bytes as it takes', (value) => {
    const scopes: AuditScope[] = [
      { fromMillis: value, toMillis: value, pinnedAt: value, objectType: null, action: null },
      { fromMillis: value === 0 ? 0 : -value, toMillis: 0, pinnedAt: 0, objectType: null, action: 'Create' },
      { fromMillis: 1 - Math.ceil(value / 2), toMillis: 1, pinnedAt: 1, objectType: null, action: 'Link' },
      { fromMillis: 0, toMillis: value, pinnedAt: value, objectType: 'x', action: 'Delete' },
      { fromMillis: NOW, toMillis: NOW, pinnedAt: NOW + value, objectType: null, action: 'Unlink' },
    ];
    for (const s of scopes) {
      const text = encodeCursor({ offset: value, scope: s });
      expect(text).toBe(issued(value, s));
      expect(decodeCursor(text, 'after')).toEqual({ offset: value, scope: s });
    }
  });

  it('accepts every action and an objectType of the longest allowed length', () => {
    for (const [index, action] of [null, 'Create', 'Update', 'Delete', 'Link', 'Unlink'].entries()) {
      expect(decodeCursor(raw(3, 0, index, FROM, SPAN, 0), 'after').scope.action).toBe(action);
    }
    for (const objectType of ['x'.repeat(100), '名'.repeat(100)]) {
      expect(decodeCursor(raw(3, 0, 0x08, FROM, SPAN, 0, objectType), 'after').scope.objectType).toBe(objectType);
    }
    expect(decodeCursor(raw(3, varint(2 ** 48), 0, FROM, SPAN, 0), 'after').offset).toBe(2 ** 48);
  });

  const valid = encodeCursor({ offset: 300, scope: { ...scope, objectType: null, action: 'Delete' } });
  const validBytes = Buffer.from(valid, 'base64url');
  it.each([
    ['a varint cut short', raw(3, [0x80])],
    ['the last varint cut short', raw(3, 0, 0, FROM, SPAN, [0x80])],
    ['an empty objectType', raw(3, 0, 0x08, FROM, SPAN, 0)],
    ['action 7', raw(3, 0, 7, FROM, SPAN, 0)],
    ['an unknown flag beside an action', raw(3, 0, 0x40 | 1, FROM, SPAN, 0)],
    ['a varint of eleven bytes', raw(3, [...Array.from({ length: 10 }, () => 0x80), 0x00], 0, FROM, SPAN, 0)],
    ['an offset with a padding byte', raw(3, [0x87, 0x00], 0, FROM, SPAN, 0)],
    ['a span with a padding byte', raw(3, 0, 0, FROM, [...SPAN.slice(0, -1), SPAN.at(-1)! | 0x80, 0x00], 0)],
    ['standard base64 of a cursor', Buffer.from(raw(3, 0, 0, [0xff, 0x7f], SPAN, 0), 'base64url').toString('base64')],
    ['a cursor with a line break', `${valid.slice(0, 4)}\n${valid.slice(4)}`],
    ['a cursor with a space', `${valid} `],
    ['a cursor of 600 characters', raw(3, 0, 0x08, FROM, SPAN, 0, 'x'.repeat(440))],
    ...Array.from({ length: validBytes.length - 1 }, (_, length) => [
      `the first ${length} bytes of a cursor`,
      validBytes.subarray(0, length).toString('base64url'),
    ]),
  ])('rejects %s as BAD_USER_INPUT naming the argument', (_name, text) => {
    for (const argument of ['after', 'before'] as const) {
      expect(() => decodeCursor(text, argument)).toThrow(badInput(`\`${argument}\` is not a valid auditEvents cursor`));
      expect(() => decodeCursor(text, argument)).toThrow(expect.objectContaining({ detail: { argument } }));
    }
  });
});

describe('cursor windows', () => {
  /** A cursor in the gateway's own encoding around a window it would never issue. */
  const crafted = (fromMillis: number, toMillis: number, pinnedAt: number) =>
    encodeCursor({ offset: 0, scope: { fromMillis, toMillis, pinnedAt, objectType: null, action: null } });
  const MAX_DATE = 8.64e15;

  it('accepts a window of one instant (from = to) ending at its pin', () => {
    const instant: AuditScope = { fromMillis: NOW, toMillis: NOW, pinnedAt: NOW, objectType: null, action: null };
    expect(decodeCursor(encodeCursor({ offset: 3, scope: instant }), 'after')).toEqual({ offset: 3, scope: instant });
  });

  it('accepts bounds at the ends of the Date range', () => {
    const widest: AuditScope = { fromMillis: -MAX_DATE, toMillis: 0, pinnedAt: MAX_DATE, objectType: null, action: null };
    expect(decodeCursor(encodeCursor({ offset: 0, scope: widest }), 'after').scope).toMatchObject({ fromMillis: -MAX_DATE, pinnedAt: MAX_DATE });
  });

  it.each([
    ['from before the first Date', crafted(-MAX_DATE - 1, NOW, NOW)],
    ['to after the last Date', crafted(NOW, MAX_DATE + 1, MAX_DATE + 1)],
    ['pin after the last Date', crafted(NOW, NOW, MAX_DATE + 1)],
  ])('rejects a crafted cursor with %s as BAD_USER_INPUT', (_name, text) => {
    expect(() => decodeCursor(text, 'after')).toThrow(badInput('`after` is not a valid auditEvents cursor'));
    expect(() => decodeCursor(text, 'after')).toThrow(expect.objectContaining({ detail: { argument: 'after' } }));
  });
});

describe('paging plan', () => {
  it('reads slack rows past a tail page rather than probe on: at least 32, at most what one call has left', () => {
    const slack = (last: number) => (planPage({ last }, NOW) as { slack?: number }).slack;
    expect([1, 31, 32, 50, 2500, 4000, 4968, 4990, 5000].map(slack)).toEqual([32, 32, 32, 50, 2500, 1000, 32, 32, 32]);
  });

  /** The page of `size` records just past position lo - 1 (forward) or just before hi (backward). */
  const plan = (lo: number, hi: number | undefined, direction: 'forward' | 'backward', size: number) =>
    planPage(
      {
        ...(lo > 0 ? { after: encodeCursor({ offset: lo - 1, scope }) } : {}),
        ...(hi === undefined ? {} : { before: encodeCursor({ offset: hi, scope }) }),
        ...(direction === 'forward' ? { first: size } : { last: size }),
      },
      NOW,
    );
  const reads = (p: PagePlan | ReadPlan) => {
    if (p.needsProbe) throw new Error('a probe plan reads nothing yet');
    return { offset: p.offset, limit: p.limit, size: p.size };
  };

  it('plans forward and backward slices: the page and one row past it', () => {
    expect(reads(plan(10, undefined, 'forward', 5))).toEqual({ offset: 10, limit: 6, size: 5 });
    expect(reads(plan(10, 12, 'forward', 5))).toEqual({ offset: 10, limit: 3, size: 2 });
    expect(reads(plan(10, 30, 'backward', 5))).toEqual({ offset: 25, limit: 6, size: 5 });
    expect(reads(plan(10, 12, 'backward', 5))).toEqual({ offset: 10, limit: 3, size: 2 });
  });

  it('makes a slice of the rows read: the extra row is the next page, a short read the window end', () => {
    const forward = plan(10, undefined, 'forward', 5) as ReadPlan;
    expect(forward.pageFor(6)).toEqual({ start: 10, count: 5, hasNextPage: true });
    expect(forward.pageFor(5)).toEqual({ start: 10, count: 5, hasNextPage: false, windowSize: 15 });
    expect(forward.pageFor(0)).toEqual({ start: 10, count: 0, hasNextPage: false });
    expect((plan(0, undefined, 'forward', 5) as ReadPlan).pageFor(0)).toEqual({
      start: 0,
      count: 0,
      hasNextPage: false,
      windowSize: 0,
    });
  });

  it('plans empty pages: nothing read before a `before` cursor, one row otherwise', () => {
    expect(reads(plan(10, 30, 'forward', 0))).toEqual({ offset: 10, limit: 0, size: 0 });
    expect((plan(10, 30, 'forward', 0) as ReadPlan).pageFor(0)).toEqual({ start: 10, count: 0, hasNextPage: true });
    expect((plan(10, 30, 'backward', 0) as ReadPlan).pageFor(0)).toEqual({ start: 30, count: 0, hasNextPage: true });
    const forward = plan(10, undefined, 'forward', 0) as ReadPlan;
    expect(reads(forward)).toEqual({ offset: 10, limit: 1, size: 0 });
    expect([forward.pageFor(1), forward.pageFor(0)].map((p) => p.hasNextPage)).toEqual([true, false]);
    const backward = plan(0, undefined, 'backward', 0) as ReadPlan;
    expect(reads(backward)).toEqual({ offset: 0, limit: 1, size: 0 });
    expect([backward.pageFor(1), backward.pageFor(0)]).toEqual([
      { start: 1, count: 0, hasNextPage: false },
      { start: 0, count: 0, hasNextPage: false },
    ]);
  });

  it('plans a tail page (`last` without `before`) as probes past the `after` record, then one read', () => {
    const tail = plan(10, undefined, 'backward', 5);
    expect(tail).toMatchObject({ needsProbe: true, knownRow: 9, slack: 32, scope });
    expect(plan(0, undefined, 'backward', 5)).toMatchObject({ needsProbe: true, knownRow: -1 });
    if (!tail.needsProbe) throw new Error('expected a probe plan');
    // The window has 40 to 60 rows: read from the earliest start (35) up to 60.
    const read = tail.afterProbe({ lastPresent: 39, firstMissing: 60 });
    expect(reads(read)).toEqual({ offset: 35, limit: 25, size: 5 });
    expect(read.minRows).toBe(5);
    expect(read.pageFor(12)).toEqual({ start: 42, count: 5, hasNextPage: false, windowSize: 47 });
    // A window that ends inside the page's reach: the page starts at `after`'s successor.
    const short = tail.afterProbe({ lastPresent: 11, firstMissing: 14 });
    expect(reads(short)).toEqual({ offset: 10, limit: 4, size: 5 });
    expect(short.pageFor(3)).toEqual({ start: 10, count: 3, hasNextPage: false, windowSize: 13 });
    // `after` names the window's last record: nothing to read, and the window's size is known.
    const atEnd = tail.afterProbe({ lastPresent: 9, firstMissing: 10 });
    expect(reads(atEnd)).toEqual({ offset: 10, limit: 0, size: 5 });
    expect(atEnd.pageFor(0)).toEqual({ start: 10, count: 0, hasNextPage: false, windowSize: 10 });
  });
});

describe('page request', () => {
  const cursor = (offset: number, s: AuditScope = scope) => encodeCursor({ offset, scope: s });

  it('defaults: first 50, to = now (pinned), from = 72 h before to', () => {
    expect(planPage({}, NOW)).toMatchObject({
      scope: { fromMillis: NOW - 72 * HOUR, toMillis: NOW, pinnedAt: NOW, objectType: null, action: null },
      offset: 0,
      limit: 51,
      size: 50,
    });
  });

  it('caps `to` at the pin, so later events stay out of the window', () => {
    const r = planPage({ filter: { to: new Date(NOW + HOUR) } }, NOW);
    expect(r.scope.toMillis).toBe(NOW);
    expect(r.scope.fromMillis).toBe(NOW - 72 * HOUR);
  });

  it('maps cursors to positions: the page starts past `after` and ends before `before`; before alone pages backward', () => {
    expect(planPage({ after: cursor(9), first: 5 }, NOW + HOUR)).toMatchObject({ offset: 10, limit: 6, size: 5 });
    expect(planPage({ before: cursor(9) }, NOW)).toMatchObject({ offset: 0, limit: 10, size: 9 });
    expect(planPage({ before: cursor(60) }, NOW)).toMatchObject({ offset: 10, limit: 51, size: 50 });
    expect(planPage({ after: cursor(2), before: cursor(9), last: 3 }, NOW)).toMatchObject({ offset: 6, limit: 4, size: 3 });
  });

  it('keeps the cursor scope (and its pin) on later pages, with the filter left out or repeated', () => {
    const later = NOW + 5 * HOUR;
    expect(planPage({ after: cursor(0) }, later).scope).toEqual(scope);
    expect(planPage({ after: cursor(0), filter: { objectType: 'LOGIN' } }, later).scope).toEqual(scope);
    expect(
      planPage({ after: cursor(0), filter: { objectType: 'LOGIN', to: new Date(NOW), from: new Date(NOW - 72 * HOUR) } }, later).scope,
    ).toEqual(scope);
  });

  it.each([
    ['first with last', { first: 1, last: 1 }, 'not both'],
    ['negative first', { first: -1 }, '`first` must be between 0 and 5000'],
    ['too large first', { first: 5001 }, '`first` must be between 0 and 5000'],
    ['negative last', { last: -3 }, '`last` must be between 0 and 5000'],
    ['too large last', { last: 10_000 }, '`last` must be between 0 and 5000'],
    ['from after to', { filter: { from: new Date(NOW), to: new Date(NOW - 1) } }, '`filter.from` is after `filter.to`'],
    ['from in the future', { filter: { from: new Date(NOW + 1) } }, 'capped'],
    ['empty objectType', { filter: { objectType: '' } }, 'objectType'],
    ['malformed after', { after: 'nope!' }, '`after` is not a valid'],
  ])('rejects %s', (_name, args, message) => {
    expect(() => planPage(args, NOW)).toThrow(badInput(message));
  });

  it('rejects a cursor used with a different filter', () => {
    expect(() => planPage({ after: cursor(3), filter: { objectType: 'LAUNCH' } }, NOW)).toThrow(badInput('different filter'));
    expect(() => planPage({ after: cursor(3), filter: {} }, NOW)).toThrow(badInput('different filter'));
    expect(() => planPage({ after: cursor(3), filter: { objectType: 'LOGIN', action: 'Update' } }, NOW)).toThrow(badInput('different filter'));
    expect(() => planPage({ before: cursor(3), filter: { objectType: 'LOGIN', from: new Date(NOW - HOUR) } }, NOW)).toThrow(badInput('different filter'));
  });

  it('rejects after/before from different connections or in the wrong order', () => {
    const other = { ...scope, objectType: 'LAUNCH' };
    expect(() => planPage({ after: cursor(1), before: cursor(5, other) }, NOW)).toThrow(badInput('different auditEvents connections'));
    expect(() => planPage({ after: cursor(5), before: cursor(5) }, NOW)).toThrow(badInput('newer record'));
  });
});

describe('values readings', () => {
  it('splits authMethods on commas outside parentheses', () => {
    expect(authMethodLabels('Password (Cloud Deployment), RSA SecurID (Token, PIN)')).toEqual([
      'Password (Cloud Deployment)',
      'RSA SecurID (Token, PIN)',
    ]);
    expect(authMethodLabels('Kerberos (Windows Integrated, IWA)')).toEqual(['Kerberos (Windows Integrated, IWA)']);
    expect(authMethodLabels(' Verify ,, Password ')).toEqual(['Verify', 'Password']);
    expect(authMethodLabels('')).toEqual([]);
    expect(authMethodLabels(undefined)).toEqual([]);
    expect(authMethodLabels(['Password'])).toEqual([]);
  });

  it('reads success as a boolean, strictly', () => {
    expect([booleanValue('true'), booleanValue('false'), booleanValue(true), booleanValue(false)]).toEqual([true, false, true, false]);
    expect([booleanValue('yes'), booleanValue(1), booleanValue(null), booleanValue(undefined)]).toEqual([null, null, null, null]);
  });

  it('reads strings only', () => {
    expect([stringValue('a'), stringValue(1), stringValue(null), stringValue({})]).toEqual(['a', null, null, null]);
  });
});
