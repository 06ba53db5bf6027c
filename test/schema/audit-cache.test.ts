/**
 * auditEvents through the whole gateway with the closed-window audit cache: separate GraphQL
 * requests for a closed window share upstream calls, open windows never do, and the cache can
 * be switched off. Simulator over real HTTP; counters say what reached the upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchPage, HOUR, PAGE_QUERY, type GqlFilter } from '../helpers/audit.js';
import { startTestGateway, type GraphQLResponse, type TestGateway } from '../helpers/gateway.js';

const simulator = { eventCount: 3000 };
/** Cache on (8 MiB), default settle time (60 s). */
let cached: TestGateway;
let off: TestGateway;
/** Settle time 0: a window is closed as soon as its end has passed. */
let noSettle: TestGateway;

beforeAll(async () => {
  [cached, off, noSettle] = await Promise.all([
    startTestGateway({ simulator, env: { AUDIT_CACHE_MAX_BYTES: String(8 * 1024 * 1024) } }),
    startTestGateway({ simulator, env: { AUDIT_CACHE_MAX_BYTES: '0' } }),
    startTestGateway({ simulator, env: { AUDIT_CACHE_SETTLE_MS: '0' } }),
  ]);
});
afterAll(() => Promise.all([cached, off, noSettle].map((gw) => gw?.close())));

/** Upstream audit calls made while `run` runs. */
async function upstreamCallsOf(gw: TestGateway, run: () => Promise<unknown>): Promise<number> {
  gw.sim.control.resetCounters();
  await run();
  return gw.sim.control.counters().audit;
}

const windowEndedAgo = (ms: number): GqlFilter => {
  const to = Date.now() - ms;
  return { from: new Date(to - 2 * HOUR).toISOString(), to: new Date(to).toISOString() };
};

const withoutCursors = (response: GraphQLResponse | undefined) =>
  JSON.parse(JSON.stringify(response, (key, value: unknown) => (/cursor$/i.test(key) ? undefined : value)));

describe('auditEvents with the closed-window cache', { timeout: 20_000 }, () => {
  it('answers a closed window page asked in two requests identically, with one upstream call', async () => {
    const variables = { first: 20, filter: { ...windowEndedAgo(5 * 60_000), objectType: 'LOGIN' } };
    let first: GraphQLResponse | undefined;
    let second: GraphQLResponse | undefined;
    expect(await upstreamCallsOf(cached, async () => (first = await cached.execute(PAGE_QUERY, variables)))).toBe(1);
    expect(await upstreamCallsOf(cached, async () => (second = await cached.execute(PAGE_QUERY, variables)))).toBe(0);
    expect(first?.errors).toBeUndefined();
    expect(first?.data.auditEvents.edges).toHaveLength(20);
    // A first page's cursors carry the time it was asked at (its pin); all else is the same.
    expect(withoutCursors(second)).toEqual(withoutCursors(first));

    // A later page asked twice with the same cursor: the very same answer.
    const next = { first: 20, after: first?.data.auditEvents.pageInfo.endCursor };
    let third: GraphQLResponse | undefined;
    let fourth: GraphQLResponse | undefined;
    expect(await upstreamCallsOf(cached, async () => (third = await cached.execute(PAGE_QUERY, next)))).toBe(1);
    expect(await upstreamCallsOf(cached, async () => (fourth = await cached.execute(PAGE_QUERY, next)))).toBe(0);
    expect(third?.errors).toBeUndefined();
    expect(fourth).toEqual(third);

    const metrics = await (await cached.fetch('/metrics')).text();
    expect(metrics).toMatch(/^gateway_cache_lookups_total\{cache="audit-report",outcome="hit"\} 2$/m);
    expect(metrics).toMatch(/^gateway_cache_lookups_total\{cache="audit-report",outcome="miss"\} 2$/m);
  });

  it('sends an open window (to = now, the default) upstream on every request', async () => {
    const filter: GqlFilter = { from: new Date(Date.now() - HOUR).toISOString() };
    expect(await upstreamCallsOf(cached, () => fetchPage(cached, { first: 10, filter }))).toBe(1);
    expect(await upstreamCallsOf(cached, () => fetchPage(cached, { first: 10, filter }))).toBe(1);
  });

  it('sends a window that ended less than the settle time ago upstream on every request', async () => {
    const filter = windowEndedAgo(10_000);
    expect(await upstreamCallsOf(cached, () => fetchPage(cached, { first: 10, filter }))).toBe(1);
    expect(await upstreamCallsOf(cached, () => fetchPage(cached, { first: 10, filter }))).toBe(1);
  });

  it('never caches with AUDIT_CACHE_MAX_BYTES=0', async () => {
    const filter = windowEndedAgo(5 * 60_000);
    expect(await upstreamCallsOf(off, () => fetchPage(off, { first: 10, filter }))).toBe(1);
    expect(await upstreamCallsOf(off, () => fetchPage(off, { first: 10, filter }))).toBe(1);
  });

  it('caches the later pages of a connection once the window pinned by its first page has settled', async () => {
    const filter: GqlFilter = { from: new Date(Date.now() - HOUR).toISOString() };
    const first = await fetchPage(noSettle, { first: 10, filter });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const next = { first: 10, after: first.pageInfo.endCursor };
    let page2a: unknown;
    let page2b: unknown;
    expect(await upstreamCallsOf(noSettle, async () => (page2a = await fetchPage(noSettle, next)))).toBe(1);
    expect(await upstreamCallsOf(noSettle, async () => (page2b = await fetchPage(noSettle, next)))).toBe(0);
    expect(page2b).toEqual(page2a);
  });
});
