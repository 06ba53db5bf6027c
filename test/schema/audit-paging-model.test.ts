/**
 * The paging logic against an in-memory window through the real loaders: walks in both
 * directions over random window sizes, exact pageInfo, call counts and concurrency.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveAuditConnection } from '../../src/gateway/schema/audit/connection.js';
import type { AuditConnectionArgs } from '../../src/audit/paging/page.js';
import { locateWindowEnd } from '../../src/audit/paging/window.js';
import { fakeAudit, fakeInfo, type FakeAudit } from '../helpers/audit-fake-upstream.js';

const page = (audit: FakeAudit, args: AuditConnectionArgs) => resolveAuditConnection(args, audit.context(), fakeInfo);
type AuditConnectionResult = Awaited<ReturnType<typeof page>>;
const uuids = (p: AuditConnectionResult) => p.edges.map((e) => e.node.uuid);
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => `r${from + i}`);

describe('window end search', () => {
  it('brackets the end within the slack in O(log n) one-row probes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 2_000_000 }), fc.integer({ min: 0, max: 200 }), async (size, slack) => {
        let probes = 0;
        let rounds = 0;
        const end = await locateWindowEnd(
          async (positions) => {
            rounds++;
            probes += positions.length;
            return positions.map((p) => p < size);
          },
          -1,
          slack,
        );
        expect(end.lastPresent).toBeLessThan(size);
        expect(end.firstMissing).toBeGreaterThanOrEqual(size);
        expect(end.firstMissing - end.lastPresent - 1).toBeLessThanOrEqual(slack);
        // Gallop: log8(n)/4 rounds; narrowing: log5(n/slack) rounds; 4 probes each.
        const bound = Math.ceil(Math.log(size + 2) / Math.log(8) / 4) + Math.ceil(Math.log(size + 2) / Math.log(5)) + 2;
        expect(rounds).toBeLessThanOrEqual(bound);
        expect(probes).toBeLessThanOrEqual(4 * rounds);
      }),
      { numRuns: 300 },
    );
  });

  it('gives up with UPSTREAM_INVALID_RESPONSE when the upstream never runs out of rows', async () => {
    const endless = locateWindowEnd(async (positions) => positions.map(() => true), -1, 32);
    await expect(endless).rejects.toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE' });
  });
});

describe('paging over a window', () => {
  it('forward walks return every record once, in order, with exact pageInfo', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 120 }), fc.integer({ min: 1, max: 30 }), async (size, n) => {
        const audit = fakeAudit(size);
        const seen: string[] = [];
        let after: string | null = null;
        for (let pages = 0; ; pages++) {
          const p: AuditConnectionResult = await page(audit, { first: n, after });
          seen.push(...uuids(p));
          expect(p.pageInfo.hasPreviousPage).toBe(pages > 0);
          expect(p.pageInfo.hasNextPage).toBe(seen.length < size);
          if (!p.pageInfo.hasNextPage) break;
          expect(p.edges.length).toBe(n);
          after = p.pageInfo.endCursor!;
        }
        expect(seen).toEqual(range(0, size));
      }),
      { numRuns: 40 },
    );
  });

  it('backward walks from any cursor (or from the end) return every earlier record once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 150 }),
        fc.integer({ min: 1, max: 30 }),
        // Half the walks start from the end, where no `before` cursor is given.
        fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
        async (size, n, at) => {
          const audit = fakeAudit(size);
          const all = await page(audit, { first: size });
          const cut = Math.min(size, Math.floor(at * (size + 1)));
          let before: string | null = cut < size ? all.edges[cut]!.cursor : null;
          const seen: string[] = [];
          for (let pages = 0; ; pages++) {
            const p: AuditConnectionResult = await page(audit, { last: n, before });
            seen.unshift(...uuids(p));
            // Backward pages: a `before` record follows; the page found from the end has none after it.
            expect(p.pageInfo.hasNextPage).toBe(cut < size || pages > 0);
            expect(p.pageInfo.hasPreviousPage).toBe(seen.length < cut);
            if (!p.pageInfo.hasPreviousPage) break;
            before = p.pageInfo.startCursor!;
          }
          expect(seen).toEqual(range(0, cut));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('pages between two cursors', async () => {
    const audit = fakeAudit(100);
    const all = await page(audit, { first: 100 });
    const after = all.edges[10]!.cursor;
    const before = all.edges[20]!.cursor;
    const forward = await page(audit, { after, before, first: 5 });
    expect(uuids(forward)).toEqual(range(11, 16));
    expect(forward.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    const all9 = await page(audit, { after, before, first: 50 });
    expect(uuids(all9)).toEqual(range(11, 20));
    expect(all9.pageInfo.hasNextPage).toBe(true); // the `before` record follows
    const backward = await page(audit, { after, before, last: 5 });
    expect(uuids(backward)).toEqual(range(15, 20));
    const tail = await page(audit, { after, last: 5 });
    expect(uuids(tail)).toEqual(range(95, 100));
    expect(tail.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
  });

  it('answers first: 0 and last: 0 with exact page info, at most one one-row read and none with `before`', async () => {
    const audit = fakeAudit(7);
    expect((await page(audit, { first: 0 })).pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, startCursor: null });
    expect((await page(audit, { last: 0 })).pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true, endCursor: null });
    expect(audit.calls.map((call) => call.pageSize)).toEqual([1, 1]);
    const none = fakeAudit(0);
    expect((await page(none, { first: 0 })).pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    expect((await page(none, { last: 0 })).pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const { pageInfo } = await page(audit, { first: 3 });
    audit.calls.length = 0;
    const afterCursor = await page(audit, { first: 0, after: pageInfo.endCursor });
    expect(afterCursor).toMatchObject({ edges: [], pageInfo: { hasPreviousPage: true, hasNextPage: true } });
    const beforeCursor = await page(audit, { last: 0, before: pageInfo.endCursor });
    expect(beforeCursor).toMatchObject({ edges: [], pageInfo: { hasPreviousPage: true, hasNextPage: true } });
    expect(audit.calls).toHaveLength(1);
  });

  it('reads a 5000-row page plus its look-ahead row in two concurrent calls', async () => {
    const audit = fakeAudit(12_000);
    const p = await page(audit, { first: 5000 });
    expect(p.edges.length).toBe(5000);
    expect(p.pageInfo.hasNextPage).toBe(true);
    expect(audit.calls.map((c) => [c.startIndex, c.pageSize])).toEqual([
      [0, 5000],
      [5000, 1],
    ]);
    expect(audit.maxInFlight()).toBe(2);

    const exact = fakeAudit(10_000);
    const second = await page(exact, { first: 5000, after: p.pageInfo.endCursor });
    expect(second.edges.length).toBe(5000);
    expect(second.pageInfo.hasNextPage).toBe(false);
  });

  it('finds the oldest records with `last` alone in O(log n) calls', async () => {
    const audit = fakeAudit(24_000);
    const p = await page(audit, { last: 10 });
    expect(uuids(p)).toEqual(range(23_990, 24_000));
    expect(p.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(audit.calls.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(24_000)));
    expect(audit.calls.filter((c) => c.pageSize > 1).length).toBe(1);
  });

  it('reads a page whose look-ahead ends exactly at the upstream page size in one call', async () => {
    const audit = fakeAudit(6000);
    expect(uuids(await page(audit, { first: 4999 }))).toEqual(range(0, 4999));
    expect(audit.calls.map((c) => [c.startIndex, c.pageSize])).toEqual([[0, 5000]]);
  });

  it('ends a read at a short page: rows after it would not be contiguous', async () => {
    // An upstream that never answers more than 4000 rows per call: the first call comes back short.
    const audit = fakeAudit(12_000, { rowsPerCall: 4000 });
    const result = await page(audit, { first: 5000 });
    expect(uuids(result)).toEqual(range(0, 4000));
    expect(result.pageInfo.endCursor).toBe(result.edges.at(-1)!.cursor);
  });

  it('leaves unreadable rows out and keeps every other cursor on its position', async () => {
    const audit = fakeAudit(30, { unreadable: new Set([0, 4, 9]) });
    const p = await page(audit, { first: 10 });
    expect(uuids(p)).toEqual(['r1', 'r2', 'r3', 'r5', 'r6', 'r7', 'r8']);
    // The page's cursors are positions: endCursor is r9's although r9 could not be read.
    const next = await page(audit, { first: 5, after: p.pageInfo.endCursor });
    expect(uuids(next)).toEqual(range(10, 15));
    const firstGood = await page(audit, { first: 3, after: p.edges[0]!.cursor });
    expect(uuids(firstGood)).toEqual(['r2', 'r3']);
  });
});
