/** All 24,000 seeded audit rows walked in full 5000-row pages over HTTP, against the simulator's ground truth. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HOUR, walkInFullPages } from '../helpers/audit.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let anchor: number;

beforeAll(async () => {
  anchor = Date.now();
  gw = await startTestGateway({ fullHistory: true });
});
afterAll(() => gw?.close());

it('walks a 24,000-row window in full pages with exact hasNextPage', async () => {
  const filter = { to: new Date(anchor).toISOString(), from: new Date(anchor - 72 * HOUR).toISOString() };
  const { seen, truth } = await walkInFullPages(gw, filter);
  expect(truth.length).toBeGreaterThan(20_000);
  expect(seen).toEqual(truth);
}, 120_000);
