/**
 * auditEvents failures: every bad argument is BAD_USER_INPUT, and an unreadable row is an error
 * entry of its own while the rest of the page, and the next page, come back unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/audit/paging/cursor.js';
import { fetchPage, groundTruth, HOUR, UUID_PAGE_QUERY, type GqlFilter, type Page, type PageArgs } from '../helpers/audit.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let anchor: number;
let filter: GqlFilter;
let cursorA: string;
let cursorB: string;

beforeAll(async () => {
  anchor = Date.now();
  gw = await startTestGateway();
  filter = { from: new Date(anchor - 2 * HOUR).toISOString(), to: new Date(anchor - HOUR).toISOString(), objectType: 'LOGIN' };
  const page = await fetchPage(gw, { first: 10, filter });
  cursorA = page.edges[2]!.cursor;
  cursorB = page.edges[7]!.cursor;
});
afterAll(() => gw?.close());

const garbage = Buffer.from('{"offset":3}').toString('base64url');
/** Well-formed but for its window: `window.to` could not be served as a DateTime. */
const beyondDates = Buffer.from('[1,0,0,8640000000000001,8640000000000001,null,null]').toString('base64url');

describe('bad arguments', () => {
  const cases: [string, () => PageArgs, RegExp][] = [
    ['first with last', () => ({ first: 5, last: 5 }), /not both/],
    ['negative first', () => ({ first: -1 }), /`first` must be between 0 and 5000/],
    ['first above 5000', () => ({ first: 5001 }), /`first` must be between 0 and 5000/],
    ['negative last', () => ({ last: -1 }), /`last` must be between 0 and 5000/],
    ['last above 5000', () => ({ last: 5001 }), /`last` must be between 0 and 5000/],
    ['malformed after', () => ({ after: 'not-a-cursor!' }), /`after` is not a valid auditEvents cursor/],
    ['forged after', () => ({ after: garbage }), /`after` is not a valid auditEvents cursor/],
    ['malformed before', () => ({ before: 'eyJ4Ijox' }), /`before` is not a valid auditEvents cursor/],
    ['cursor whose window ends past the Date range', () => ({ after: beyondDates }), /`after` is not a valid auditEvents cursor/],
    ['from after to', () => ({ filter: { from: filter.to, to: filter.from } }), /`filter.from` is after `filter.to`/],
    ['from in the future', () => ({ filter: { from: new Date(Date.now() + HOUR).toISOString() } }), /after `filter.to`/],
    ['empty objectType', () => ({ filter: { objectType: '' } }), /objectType/],
    ['cursor with another objectType', () => ({ after: cursorA, filter: { ...filter, objectType: 'LAUNCH' } }), /different filter/],
    ['cursor with another action', () => ({ after: cursorA, filter: { ...filter, action: 'UPDATE' } }), /different filter/],
    ['cursor with another window', () => ({ before: cursorA, filter: { ...filter, from: new Date(anchor - 3 * HOUR).toISOString() } }), /different filter/],
    ['cursor with the default window', () => ({ after: cursorA, filter: { objectType: 'LOGIN' } }), /different filter/],
    ['after not newer than before', () => ({ after: cursorB, before: cursorA, first: 2 }), /newer record/],
    [
      'after and before of different connections',
      () => ({ after: cursorA, before: encodeCursor({ offset: 9, scope: { fromMillis: 0, toMillis: 1, pinnedAt: 2, objectType: null, action: null } }) }),
      /different auditEvents connections/,
    ],
  ];

  it.each(cases)('%s is BAD_USER_INPUT', async (_name, args, message) => {
    gw.sim.control.resetCounters();
    const response = await gw.execute(UUID_PAGE_QUERY, { ...args() });
    expect(response.data).toEqual({ auditEvents: null });
    expect(response.errors).toHaveLength(1);
    expect(response.errors![0]).toMatchObject({ path: ['auditEvents'], extensions: { code: 'BAD_USER_INPUT' } });
    expect(response.errors![0]!.message).toMatch(message);
    expect(gw.sim.control.counters().audit).toBe(0); // refused before any upstream call
  });

  it('accepts the cursor with its filter repeated, or with the filter left out', async () => {
    const repeated = await fetchPage(gw, { after: cursorA, first: 3, filter });
    const omitted = await fetchPage(gw, { after: cursorA, first: 3 });
    expect(repeated).toEqual(omitted);
    expect(repeated.edges).toHaveLength(3);
  });
});

describe('an unreadable row', () => {
  it('is left out with an UPSTREAM_INVALID_RESPONSE error naming its position; the cursors stay put', async () => {
    const window = { from: new Date(anchor - 5 * HOUR).toISOString(), to: new Date(anchor - 4 * HOUR).toISOString() };
    const truth = groundTruth(gw, window).map((r) => r.uuid);
    const intact = await fetchPage(gw, { first: 20, filter: window });
    const cursors = intact.edges.map((e) => e.cursor);
    gw.sim.control.corruptEvent(truth[3]!);
    const rowError = expect.objectContaining({
      message: 'Audit record at position 3 of the window could not be read.',
      path: ['auditEvents'],
      extensions: expect.objectContaining({ code: 'UPSTREAM_INVALID_RESPONSE' }),
    });
    const uuidsOf = (page: Page) => page.edges.map((e) => e.node['uuid']);
    const without3 = <T>(items: T[], from: number, to: number) => items.slice(from, to).filter((_, i) => i + from !== 3);

    // A new connection: the other rows of the page come back, the bad one is an error entry.
    const fresh = await gw.execute(UUID_PAGE_QUERY, { first: 10, filter: window });
    expect(uuidsOf(fresh.data!.auditEvents)).toEqual(without3(truth, 0, 10));
    // Needs useRowErrors() (src/gateway/plugins/execution/audit-row-errors.ts) registered in src/gateway/yoga.ts.
    expect(fresh.errors, 'row errors reach the response: is useRowErrors() registered in src/gateway/yoga.ts?').toEqual([rowError]);

    // Within the first connection: same cursors as before the corruption, minus the bad row's.
    const forward = await gw.execute(UUID_PAGE_QUERY, { first: 10, after: cursors[0] });
    const page: Page = forward.data!.auditEvents;
    expect(forward.errors).toEqual([rowError]);
    expect(uuidsOf(page)).toEqual(without3(truth, 1, 11));
    expect(page.edges.map((e) => e.cursor)).toEqual(without3(cursors, 1, 11));
    expect(page.pageInfo).toMatchObject({ endCursor: cursors[10], hasNextPage: true, hasPreviousPage: true });

    // The next page is not affected at all.
    const next = await gw.execute(UUID_PAGE_QUERY, { first: 9, after: page.pageInfo.endCursor });
    expect(next.errors).toBeUndefined();
    expect(next.data!.auditEvents.edges).toEqual(intact.edges.slice(11, 20));

    // Backward over the bad row: the same entry.
    const backward = await gw.execute(UUID_PAGE_QUERY, { last: 5, before: cursors[6] });
    expect(backward.errors).toEqual([rowError]);
    expect(backward.data!.auditEvents.edges.map((e: { cursor: string }) => e.cursor)).toEqual(without3(cursors, 1, 6));
  });
});
