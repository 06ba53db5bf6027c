/** auditEvents arguments at their edges: sizes, cursor pairs, filter bounds and the messages a client reads. */
import { describe, expect, it } from 'vitest';
import { BadUserInputError } from '../../src/lib/errors.js';
import { encodeCursor } from '../../src/audit/paging/cursor.js';
import { planPage } from '../../src/audit/paging/page.js';
import { authMethodLabels, booleanValue } from '../../src/gateway/schema/audit/record-types.js';
import type { AuditScope } from '../../src/audit/paging/cursor.js';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 21, 10, 15, 30, 123);
const scope: AuditScope = { fromMillis: NOW - 72 * HOUR, toMillis: NOW, pinnedAt: NOW, objectType: null, action: null };
const cursor = (offset: number, s: AuditScope = scope) => encodeCursor({ offset, scope: s });

const parse = (args: Parameters<typeof planPage>[0]) => () => planPage(args, NOW);
/** The positions a page reads: a run from `offset`, or a tail found by probing. */
const reads = (args: Parameters<typeof planPage>[0]) => {
  const plan = planPage(args, NOW);
  return plan.needsProbe ? { tailAfter: plan.knownRow } : { offset: plan.offset, size: plan.size, limit: plan.limit };
};
/** A BAD_USER_INPUT with exactly this message (and these other fields). */
const refused = (message: string, fields: Record<string, unknown> = {}) =>
  expect.objectContaining({ name: BadUserInputError.name, code: 'BAD_USER_INPUT', message, ...fields });

describe('page sizes and directions', () => {
  it('reads a null size as no size', () => {
    expect(reads({ first: null, last: 5 })).toEqual({ tailAfter: -1 });
    expect(reads({ first: 5, last: null })).toEqual({ offset: 0, size: 5, limit: 6 });
  });

  it('pages forward with `first` and `before`, and between two cursors without a size', () => {
    expect(reads({ first: 3, before: cursor(9) })).toEqual({ offset: 0, size: 3, limit: 4 });
    expect(reads({ after: cursor(2), before: cursor(9) })).toEqual({ offset: 3, size: 6, limit: 7 });
  });

  it('names the argument and the value it refused in the log detail', () => {
    expect(parse({ first: 5001 })).toThrow(
      refused('`first` must be between 0 and 5000.', { detail: { argument: 'first', value: 5001 } }),
    );
    expect(parse({ last: -1 })).toThrow(refused('`last` must be between 0 and 5000.', { detail: { argument: 'last', value: -1 } }));
  });
});

describe('cursor pairs', () => {
  it.each([
    ['to', { ...scope, toMillis: NOW - 1 }],
    ['the pin', { ...scope, pinnedAt: NOW + 1 }],
  ])('refuses `after` and `before` whose windows differ only in %s', (_name, other) => {
    expect(parse({ after: cursor(1), before: cursor(5, other) })).toThrow(
      refused('`after` and `before` come from different auditEvents connections.'),
    );
  });
});

describe('filter bounds', () => {
  it('takes an objectType of 1 to 100 characters', () => {
    expect(planPage({ filter: { objectType: 'x'.repeat(100) } }, NOW).scope.objectType).toBe('x'.repeat(100));
    expect(planPage({ filter: { objectType: 'x' } }, NOW).scope.objectType).toBe('x');
    for (const objectType of ['', 'x'.repeat(101)]) {
      expect(parse({ filter: { objectType } })).toThrow(refused('`filter.objectType` must have 1 to 100 characters.'));
    }
  });

  it('takes a window of one instant', () => {
    const at = new Date(NOW - HOUR);
    expect(planPage({ filter: { from: at, to: at } }, NOW).scope).toMatchObject({
      fromMillis: NOW - HOUR,
      toMillis: NOW - HOUR,
    });
  });

  it('says whether `to` was the one given or the pin it defaults to and is capped at', () => {
    expect(parse({ filter: { from: new Date(NOW - HOUR), to: new Date(NOW - 2 * HOUR) } })).toThrow(
      refused('`filter.from` is after `filter.to`.'),
    );
    const pinned = refused(
      '`filter.from` is after `filter.to`, which defaults to (and is capped at) the time of the first page.',
    );
    expect(parse({ filter: { from: new Date(NOW + HOUR) } })).toThrow(pinned);
    expect(parse({ filter: { from: new Date(NOW + HOUR), to: new Date(NOW + 2 * HOUR) } })).toThrow(pinned);
  });
});

describe('record values', () => {
  it('reads success with surrounding blanks and any case', () => {
    expect(booleanValue(' TRUE ')).toBe(true);
    expect(booleanValue('\tFalse\n')).toBe(false);
  });

  it('splits authMethods only at commas outside nested parentheses', () => {
    expect(authMethodLabels('Token ((PIN, OTP), Push), Password')).toEqual(['Token ((PIN, OTP), Push)', 'Password']);
  });
});
