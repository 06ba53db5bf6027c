/** All 24,000 seeded audit rows walked in full 5000-row pages over HTTP, against the simulator's ground truth. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fetchPage, groundTruth, HOUR, type GqlFilter } from '../helpers/audit.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let anchor: number;

beforeAll(async () => {
  anchor = Date.now();
  gw = await startTestGateway({ fullHistory: true });
});
afterAll(() => gw?.close());

it('walks a 24,000-row window in full pages with exact hasNextPage', async () => {
  const filter: GqlFilter = { to: new Date(anchor).toISOString(), from: new Date(anchor - 72 * HOUR).toISOString() };
  const truth = groundTruth(gw, { from: filter.from!, to: filter.to! }).map((r) => r.uuid);
  expect(truth.length).toBeGreaterThan(20_000);
  const seen: string[] = [];
  let page = await fetchPage(gw, { first: 5000, filter });
  for (;;) {
    seen.push(...page.edges.map((e) => e.node['uuid'] as string));
    expect(page.pageInfo.hasNextPage).toBe(seen.length < truth.length);
    if (!page.pageInfo.hasNextPage) break;
    expect(page.edges).toHaveLength(5000);
    page = await fetchPage(gw, { first: 5000, after: page.pageInfo.endCursor });
  }
  expect(seen).toEqual(truth);
}, 120_000);
