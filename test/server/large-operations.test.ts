import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditCalls, startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** Just past the 1000 rows that make an operation large. */
const LARGE = '{ auditEvents(first: 1001) { edges { cursor } } }';
const SMALL = '{ auditEvents(first: 20, filter: { objectType: "LOGIN" }) { edges { cursor } } }';
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('large operations take turns (LARGE_OPERATION_CONCURRENCY)', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    // The upstream holds the audit calls until the test has seen which ones were made.
    gateway = await startTestGateway({ env: { LARGE_OPERATION_CONCURRENCY: '1', AUDIT_CACHE_MAX_BYTES: '0' }, holdUpstream: auditCalls });
  });
  afterAll(() => gateway.close());

  it('runs one large operation at a time while small ones go straight through, and all complete', async () => {
    const upstream = gateway.upstream!;
    gateway.sim.control.resetCounters();
    const large = [gateway.execute(LARGE), gateway.execute(LARGE), gateway.execute(LARGE)];
    const small = gateway.execute(SMALL);
    // A cold gateway fetches its token first: wait (bounded) until the first calls arrive.
    for (let i = 0; i < 500 && upstream.heldCount() < 2; i++) await settle(20);
    // Time for a third call to show, were the large ones not taking turns.
    await settle(100);
    // One large page and the small one have reached the upstream; the other large ones wait.
    expect(upstream.heldCount()).toBe(2);
    upstream.release();
    const results = await Promise.all([...large, small]);
    for (const result of results) expect(result.errors).toBeUndefined();
    expect(results.slice(0, 3).map((r) => r.data.auditEvents.edges.length)).toEqual([1001, 1001, 1001]);
    expect(gateway.sim.control.counters().audit).toBe(4);
  });
});
