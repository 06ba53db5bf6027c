/** One request cannot fan out without bound: zero-size pages read nothing, upstream calls per request are capped. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_UPSTREAM_CALLS_PER_REQUEST, REQUEST_CONCURRENCY } from '../../src/gateway/loaders.js';
import { fakeAudit } from '../helpers/audit-fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const aliases = (count: number, args: (i: number) => string) =>
  Array.from({ length: count }, (_, i) => `a${i}: auditEvents(${args(i)}) { pageInfo { hasNextPage hasPreviousPage } edges { cursor } }`).join('\n');

describe('zero-size pages through the gateway', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ simulator: { eventCount: 2000 } });
  });
  afterAll(() => gw.close());
  beforeEach(() => gw.sim.control.resetCounters());

  it.each(['last: 0', 'first: 0'])('30 aliases of auditEvents(%s) cost one one-row read per distinct window, no search', async (size) => {
    const response = await gw.execute(`{ ${aliases(30, (i) => `${size}, filter: { objectType: "type-${i % 3}" }`)} }`);
    expect(response.errors).toBeUndefined();
    expect(Object.values(response.data).every((page: any) => page.edges.length === 0)).toBe(true);
    expect(gw.sim.control.counters()).toMatchObject({ audit: 3 });
  });
});

describe('upstream calls of one request', () => {
  const distinctQueries = (count: number) =>
    Array.from({ length: count }, (_, i) => ({ fromMillis: 0, toMillis: 1, pageSize: 1, startIndex: i }));

  it(`runs at most ${REQUEST_CONCURRENCY} at once and ${MAX_UPSTREAM_CALLS_PER_REQUEST} in all; the rest fail on their own`, async () => {
    const audit = fakeAudit(10);
    const context = audit.context();
    const results = await context.loaders.auditReport.loadMany(distinctQueries(MAX_UPSTREAM_CALLS_PER_REQUEST + 5));
    const failed = results.filter((r) => r instanceof Error);
    expect(failed).toHaveLength(5);
    expect(failed[0]).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(audit.calls).toHaveLength(MAX_UPSTREAM_CALLS_PER_REQUEST);
    expect(audit.maxInFlight()).toBeLessThanOrEqual(REQUEST_CONCURRENCY);
    expect(context.loaders.upstreamCalls()).toBe(MAX_UPSTREAM_CALLS_PER_REQUEST);
  });

  it('gives every request its own budget', async () => {
    const audit = fakeAudit(10);
    await audit.context().loaders.auditReport.loadMany(distinctQueries(MAX_UPSTREAM_CALLS_PER_REQUEST));
    const next = await audit.context().loaders.auditReport.loadMany(distinctQueries(3));
    expect(next.every((r) => !(r instanceof Error))).toBe(true);
  });
});
