/**
 * A cursor the gateway did not write is BAD_USER_INPUT: every cut and every one-character change
 * of a real cursor, including those that would otherwise decode as a cursor of another filter (a
 * LAUNCH cursor cut to "LAU"). Real cursors still page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadUserInputError } from '../../src/lib/errors.js';
import { decodeCursor, encodeCursor } from '../../src/audit/paging/cursor.js';
import type { AuditScope } from '../../src/audit/paging/cursor.js';
import { fetchPage, HOUR, UUID_PAGE_QUERY, type GqlFilter } from '../helpers/audit.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { cutsAndChanges } from '../helpers/text-variants.js';

const NOW = Date.UTC(2026, 10, 21, 10, 15, 30, 123);

const scopes: AuditScope[] = [
  { fromMillis: NOW - 72 * HOUR, toMillis: NOW, pinnedAt: NOW, objectType: 'LAUNCH', action: null },
  { fromMillis: NOW - 2 * HOUR, toMillis: NOW - HOUR, pinnedAt: NOW + 250, objectType: 'LOGIN', action: 'Update' },
  { fromMillis: NOW - HOUR, toMillis: NOW, pinnedAt: NOW, objectType: null, action: null },
];

describe('cursor integrity', () => {
  it.each(scopes.flatMap((scope) => [0, 300, 4999].map((offset) => ({ offset, scope }))))(
    'refuses every cut and one-character change of a cursor ($offset, $scope.objectType)',
    (cursor) => {
      const text = encodeCursor(cursor);
      expect(decodeCursor(text, 'after')).toEqual(cursor);
      for (const variant of cutsAndChanges(text)) {
        expect(() => decodeCursor(variant, 'after'), variant).toThrow(BadUserInputError);
      }
    },
  );

  it('no longer reads a LAUNCH cursor cut short as a cursor of a shorter objectType', () => {
    const launch = encodeCursor({ offset: 3, scope: scopes[0]! });
    const readable = [];
    for (let length = 1; length < launch.length; length++) {
      try {
        readable.push(decodeCursor(launch.slice(0, length), 'after').scope.objectType);
      } catch (error) {
        expect(error).toBeInstanceOf(BadUserInputError);
      }
    }
    expect(readable).toEqual([]);
  });
});

describe('cursors of a served page', () => {
  let gw: TestGateway;
  let filter: GqlFilter;
  beforeAll(async () => {
    gw = await startTestGateway();
    const anchor = Date.now();
    filter = { from: new Date(anchor - 30 * HOUR).toISOString(), to: new Date(anchor - HOUR).toISOString(), objectType: 'LAUNCH' };
  });
  afterAll(() => gw?.close());

  it('page on, and each cut of one is BAD_USER_INPUT before any upstream call', async () => {
    const first = await fetchPage(gw, { first: 4, filter });
    expect(first.edges).toHaveLength(4);
    const cursor = first.pageInfo.endCursor!;
    const next = await fetchPage(gw, { first: 2, after: cursor });
    const overlap = await fetchPage(gw, { first: 6, filter });
    expect(next.edges.map((e) => e.node['uuid'])).toEqual(overlap.edges.slice(4).map((e) => e.node['uuid']));

    gw.sim.control.resetCounters();
    const cuts = Array.from({ length: cursor.length - 1 }, (_, i) => cursor.slice(0, i + 1));
    const answers = await Promise.all(cuts.map((after) => gw.execute(UUID_PAGE_QUERY, { first: 2, after })));
    for (const [i, answer] of answers.entries()) {
      expect(answer.errors?.map((e) => e.extensions?.['code']), cuts[i]).toEqual(['BAD_USER_INPUT']);
      expect(answer.data?.["auditEvents"] ?? null).toBeNull();
    }
    expect(gw.sim.control.counters().audit).toBe(0);
  });
});
