/**
 * AuditEventConnection.totalCount through the whole gateway: exact for the pinned window and
 * filter on every page, asked upstream only when selected, and served by the audit page cache
 * for a closed window. Simulator over real HTTP; its counters say what reached the upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groundTruth, HOUR, type GqlFilter } from '../helpers/audit.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const COUNT_QUERY = /* GraphQL */ `
  query Count($first: Int, $last: Int, $after: String, $filter: AuditEventFilter) {
    auditEvents(first: $first, last: $last, after: $after, filter: $filter) {
      totalCount
      window { from to }
      pageInfo { hasNextPage endCursor }
      edges { cursor }
    }
  }
`;

interface CountPage {
  totalCount: number;
  window: { from: string; to: string };
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  edges: { cursor: string }[];
}

let gw: TestGateway;
/** Settle time 0: a window is closed (cacheable) as soon as its end has passed. */
let closing: TestGateway;

beforeAll(async () => {
  [gw, closing] = await Promise.all([
    startTestGateway({ simulator: { eventCount: 3000 } }),
    startTestGateway({ simulator: { eventCount: 3000 }, env: { AUDIT_CACHE_SETTLE_MS: '0' } }),
  ]);
});
afterAll(() => Promise.all([gw, closing].map((g) => g?.close())));

async function countPage(g: TestGateway, variables: Record<string, unknown>): Promise<CountPage> {
  const response = await g.execute<{ auditEvents: CountPage }>(COUNT_QUERY, variables);
  expect(response.errors).toBeUndefined();
  return response.data!.auditEvents;
}

async function upstreamCallsOf(g: TestGateway, run: () => Promise<unknown>): Promise<number> {
  g.sim.control.resetCounters();
  await run();
  return g.sim.control.counters().audit;
}

const lastHours = (hours: number): GqlFilter => ({ from: new Date(Date.now() - hours * HOUR).toISOString() });

describe('auditEvents totalCount', { timeout: 30_000 }, () => {
  it('is the exact number of records of the window on the first, a middle and the last page', async () => {
    const filter = lastHours(24);
    const first = await countPage(gw, { first: 25, filter });
    const expected = groundTruth(gw, first.window).length;
    expect(expected).toBeGreaterThan(100);
    expect(first.totalCount).toBe(expected);

    const middle = await countPage(gw, { first: 25, after: first.pageInfo.endCursor });
    expect(middle.totalCount).toBe(expected);

    const tail = await countPage(gw, { last: 7, after: middle.pageInfo.endCursor });
    expect(tail.edges).toHaveLength(7);
    expect(tail.totalCount).toBe(expected);
  });

  it('counts with the filter applied', async () => {
    for (const filter of [
      { ...lastHours(48), objectType: 'LOGIN' },
      { ...lastHours(48), objectType: 'Group', action: 'UPDATE' as const },
      { ...lastHours(48), objectType: 'NO_SUCH_TYPE' },
    ]) {
      const page = await countPage(gw, { first: 3, filter });
      expect(page.totalCount).toBe(groundTruth(gw, page.window, filter).length);
    }
  });

  it('asks the upstream nothing more when not selected; a page that reaches the end needs no probe', async () => {
    const filter = lastHours(24);
    const withoutCount = `query { auditEvents(first: 25, filter: { from: "${filter.from}" }) { edges { cursor } } }`;
    expect(await upstreamCallsOf(gw, () => gw.execute(withoutCount))).toBe(1);
    expect(await upstreamCallsOf(gw, () => countPage(gw, { first: 25, filter }))).toBeGreaterThan(1);
    expect(await upstreamCallsOf(gw, () => countPage(gw, { first: 4999, filter }))).toBe(1);
  });

  it('comes from the page cache for a closed window', async () => {
    const to = Date.now() - 5 * 60_000;
    const filter = { from: new Date(to - 12 * HOUR).toISOString(), to: new Date(to).toISOString() };
    const before = await countPage(closing, { first: 10, filter });
    let again: CountPage | undefined;
    expect(await upstreamCallsOf(closing, async () => (again = await countPage(closing, { first: 10, filter })))).toBe(0);
    expect(again?.totalCount).toBe(before.totalCount);
    expect(before.totalCount).toBe(groundTruth(closing, before.window).length);
  });
});
