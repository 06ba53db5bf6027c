/**
 * auditEvents paging against the simulator over real HTTP: random filters and windows walked in
 * both directions against the simulator's ground truth, stability while events arrive, the
 * window-end search, and full 5000-row pages (all 24,000 rows in the soak suite).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditRecordData } from '../../simulator/index.js';
import { fetchPage, groundTruth, HOUR, sleep, walkInFullPages, type GqlFilter, type Page } from '../helpers/audit.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
/** Seeded events lie in the 72 h before this. */
let anchor: number;

beforeAll(async () => {
  anchor = Date.now();
  gw = await startTestGateway({ fullHistory: true });
});
afterAll(() => gw?.close());

const uuids = (page: Page) => page.edges.map((e) => e.node['uuid'] as string);
const truthUuids = (records: AuditRecordData[]) => records.map((r) => r.uuid);

const filterArb = fc
  .record({
    objectType: fc.constantFrom(undefined, 'LOGIN', 'LAUNCH', 'Group', 'AppEntitlement', 'User', 'DyrectorySyncProfile', 'NoSuchType'),
    action: fc.constantFrom(undefined, undefined, 'CREATE', 'UPDATE', 'DELETE', 'LINK', 'UNLINK'),
    // Where the window ends (hours before the anchor) and how long it is: small windows keep walks short.
    endHoursAgo: fc.double({ min: 0, max: 71, noNaN: true }),
    spanMinutes: fc.integer({ min: 0, max: 40 }),
  })
  .map(({ objectType, action, endHoursAgo, spanMinutes }): GqlFilter => {
    const to = Math.round(anchor - endHoursAgo * HOUR);
    const filter: GqlFilter = { from: new Date(to - spanMinutes * 60_000).toISOString(), to: new Date(to).toISOString() };
    if (objectType) filter.objectType = objectType;
    if (action) filter.action = action as GqlFilter['action'];
    return filter;
  });

describe('auditEvents paging', () => {
  it('walks forward to the end and backward to the start exactly as the ground truth', async () => {
    await fc.assert(
      fc.asyncProperty(
        filterArb,
        fc.integer({ min: 2, max: 25 }),
        fc.integer({ min: 1, max: 25 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        async (filter, forwardSize, backwardSize, cutAt, repeatFilter) => {
          const truth = truthUuids(groundTruth(gw, { from: filter.from!, to: filter.to! }, filter));

          // Forward: first page with the filter, then its cursors (filter repeated or left out).
          const seen: string[] = [];
          const cursors: string[] = [];
          let page = await fetchPage(gw, { first: forwardSize, filter });
          for (let n = 0; ; n++) {
            seen.push(...uuids(page));
            cursors.push(...page.edges.map((e) => e.cursor));
            expect(page.pageInfo.hasPreviousPage).toBe(n > 0);
            expect(page.pageInfo.hasNextPage).toBe(seen.length < truth.length);
            if (!page.pageInfo.hasNextPage) break;
            expect(page.edges).toHaveLength(forwardSize);
            page = await fetchPage(gw, { first: forwardSize, after: page.pageInfo.endCursor, filter: repeatFilter ? filter : undefined });
          }
          expect(seen).toEqual(truth);

          // Backward from any cursor (or from the end of the window) to the start.
          const cut = Math.min(truth.length, Math.floor(cutAt * (truth.length + 1)));
          const back: string[] = [];
          let before: string | null = cut < truth.length ? cursors[cut]! : null;
          for (let n = 0; ; n++) {
            page = await fetchPage(gw, { last: backwardSize, before, filter: before ? undefined : filter });
            back.unshift(...uuids(page));
            expect(page.pageInfo.hasPreviousPage).toBe(back.length < cut);
            // A `before` record follows a backward page; the page found from the end has none.
            expect(page.pageInfo.hasNextPage).toBe(cut < truth.length || n > 0);
            if (!page.pageInfo.hasPreviousPage) break;
            before = page.pageInfo.startCursor;
          }
          expect(back).toEqual(truth.slice(0, cut));
        },
      ),
      { numRuns: 15 },
    );
  }, 60_000);

  it('does not shift later pages when events arrive between pages', async () => {
    const filter: GqlFilter = { from: new Date(anchor - HOUR / 2).toISOString() };
    const first = await fetchPage(gw, { first: 10, filter });
    const truth = truthUuids(groundTruth(gw, first.window, filter));
    expect(first.window.to).toBe(new Date(Date.parse(first.window.to)).toISOString());
    expect(truth.length).toBeGreaterThan(40);

    await sleep(5); // new events are stamped after the pinned `to`
    const inserted = gw.sim.control.insertEvents(25);
    const seen = uuids(first);
    let page = first;
    while (page.pageInfo.hasNextPage) {
      page = await fetchPage(gw, { first: 10, after: page.pageInfo.endCursor });
      expect(page.window).toEqual(first.window);
      seen.push(...uuids(page));
    }
    expect(seen).toEqual(truth);

    // A new connection (no cursor) does see them.
    const fresh = await fetchPage(gw, { first: 25, filter });
    expect(uuids(fresh)).toEqual(inserted.map((r) => r.uuid));
  });

  it('returns the oldest records for `last` without `before`, in O(log n) upstream calls', async () => {
    const filter: GqlFilter = { to: new Date(anchor).toISOString() };
    const truth = truthUuids(groundTruth(gw, { from: new Date(anchor - 72 * HOUR).toISOString(), to: filter.to! }));
    expect(truth.length).toBeGreaterThan(20_000);
    gw.sim.control.resetCounters();
    const page = await fetchPage(gw, { last: 10, filter });
    const calls = gw.sim.control.counters().audit;
    expect(uuids(page)).toEqual(truth.slice(-10));
    expect(page.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    // 24,000 rows: 6 probe rounds of 4 one-row probes and one read; well under 2*log2(n).
    expect(calls).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(truth.length)));

    // And backward from there: the page before it.
    const previous = await fetchPage(gw, { last: 10, before: page.pageInfo.startCursor });
    expect(uuids(previous)).toEqual(truth.slice(-20, -10));
    expect(previous.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
  });
});

describe('the window-end search', () => {
  it('finds the end of 24,000 rows in six rounds of four one-row probes, then reads the page in one call', async () => {
    const filter: GqlFilter = { to: new Date(anchor).toISOString() };
    const truth = truthUuids(groundTruth(gw, { from: new Date(anchor - 72 * HOUR).toISOString(), to: filter.to! }));
    expect(truth.length).toBe(24_000);
    gw.sim.wire.clear();
    const page = await fetchPage(gw, { last: 50, filter });
    expect(uuids(page)).toEqual(truth.slice(-50));

    const calls = gw.sim.wire.requests('audit').map((r) => ({ size: Number(r.query.pageSize), start: Number(r.query.startIndex) }));
    const probes = calls.filter((c) => c.size === 1);
    const reads = calls.filter((c) => c.size > 1);
    // Gallop: 0, 7, 63, 511 (present), then 511 + 8^4 (present) and 511 + 8^5 (missing); narrowing
    // that gap of 28,672 to the slack of 50 (a page of 50) in fifths takes 4 rounds: 6 rounds, 24 probes.
    expect(probes.slice(0, 4).map((c) => c.start).sort((a, b) => a - b)).toEqual([0, 7, 63, 511]);
    expect(probes).toHaveLength(24);
    expect(reads).toHaveLength(1);
    // One read from the earliest possible start of the page up to the first position known empty.
    expect(reads[0]!.start).toBeLessThanOrEqual(truth.length - 50);
    expect(reads[0]!.start + reads[0]!.size).toBeGreaterThanOrEqual(truth.length);
    expect(reads[0]!.size).toBeLessThanOrEqual(50 + 50 + 1);
  });
});

describe('one request', () => {
  it('pins one window for every alias, so identical pages cost one upstream call', async () => {
    gw.sim.control.resetCounters();
    const response = await gw.execute(/* GraphQL */ `
      {
        a: auditEvents(first: 10) { window { to } edges { cursor } }
        b: auditEvents(first: 10) { window { to } edges { cursor } }
      }
    `);
    expect(response.errors).toBeUndefined();
    expect(response.data.a).toEqual(response.data.b);
    expect(gw.sim.control.counters().audit).toBe(1);
  });
});

describe('5000-row pages', () => {
  it('walks a window of two full pages and a part in full pages with exact hasNextPage', async () => {
    const all = groundTruth(gw, { from: new Date(anchor - 72 * HOUR).toISOString(), to: new Date(anchor).toISOString() });
    // The soak suite walks all 24,000 rows; past two pages, every page is walked the same way.
    const filter = { from: new Date(timestampOf(all[12_000]!)).toISOString(), to: new Date(anchor).toISOString() };
    const { seen, truth } = await walkInFullPages(gw, filter);
    expect(truth.length).toBeGreaterThan(10_000);
    expect(seen).toEqual(truth);
  }, 30_000);

  it('answers hasNextPage false for a window of exactly 5000 rows', async () => {
    const all = groundTruth(gw, { from: new Date(anchor - 72 * HOUR).toISOString(), to: new Date(anchor).toISOString() });
    // The 5000th newest record, at a timestamp the 5001st does not share.
    let i = 4999;
    while (timestampOf(all[i]!) === timestampOf(all[i + 1]!)) i++;
    const filter: GqlFilter = { from: new Date(timestampOf(all[i]!)).toISOString(), to: new Date(anchor).toISOString() };
    const truth = truthUuids(groundTruth(gw, { from: filter.from!, to: filter.to! }));
    const page = await fetchPage(gw, { first: truth.length, filter });
    expect(truth.length).toBeLessThanOrEqual(5000);
    expect(uuids(page)).toEqual(truth);
    expect(page.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
  });

  it('issues the page and its look-ahead row concurrently', async () => {
    const filter: GqlFilter = { to: new Date(anchor).toISOString() };
    await fetchPage(gw, { first: 1, filter }); // the token, before the upstream slows down
    gw.sim.wire.clear();
    // Held long enough to see both requests arrive before either is answered.
    gw.sim.control.setLatency(300, 'audit');
    try {
      const pending = fetchPage(gw, { first: 5000, filter });
      await vi.waitFor(() => expect(gw.sim.wire.requests('audit').filter((r) => r.status === undefined)).toHaveLength(2));
      const page = await pending;
      expect(page.edges).toHaveLength(5000);
      expect(page.pageInfo.hasNextPage).toBe(true);
    } finally {
      gw.sim.control.setLatency(0, 'audit');
    }
    // 5000 rows and the 1-row look-ahead.
    const calls = gw.sim.wire.requests('audit').map((r) => [r.query.startIndex, r.query.pageSize]);
    expect(calls.sort()).toEqual([
      ['0', '5000'],
      ['5000', '1'],
    ]);
  });
});

function timestampOf(record: AuditRecordData): number {
  return record.timestamp ?? record.timeStamp ?? Number.NaN;
}
