/** The audit report call as the identity service receives it, and what an operator sees of bad rows. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findLeakedSecrets, fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness;
beforeAll(async () => {
  harness = await startUpstreamHarness({ simulator: { eventCount: 200 } });
});
beforeEach(() => harness.sim.wire.clear());
afterAll(async () => {
  expect(findLeakedSecrets(harness)).toEqual([]);
  await harness.close();
});

describe('audit report on the wire', { timeout: 10_000 }, () => {
  it('sends the window, both filters and the page as query parameters, with the bearer token', async () => {
    const query = { ...fullWindow(7, 3), objectType: 'LOGIN', action: 'Update' as const };
    await harness.upstreams.identity!.auditReport(query, harness.call);
    const [sent] = harness.sim.wire.requests('audit');
    expect(sent).toMatchObject({ method: 'GET', path: '/analytics/reports/audit/', status: 200 });
    expect(sent!.query).toEqual({
      fromMillis: String(query.fromMillis),
      toMillis: String(query.toMillis),
      objectType: 'LOGIN',
      action: 'Update',
      pageSize: '7',
      startIndex: '3',
    });
    expect(sent!.headers.authorization).toMatch(/^Bearer \S+$/);
  });

  it('leaves out the filters it was not given', async () => {
    await harness.upstreams.identity!.auditReport(fullWindow(5), harness.call);
    expect(Object.keys(harness.sim.wire.requests('audit')[0]!.query).sort()).toEqual([
      'fromMillis',
      'pageSize',
      'startIndex',
      'toMillis',
    ]);
  });
});

describe('unreadable rows', { timeout: 10_000 }, () => {
  it('logs one warning per page naming how many, the first 20 positions and the first reason', async () => {
    const query = fullWindow(30);
    const events = harness.sim.control.events(query);
    const corrupted = Array.from({ length: 25 }, (_, i) => i + 2);
    for (const position of corrupted) harness.sim.control.corruptEvent(events[position]!.uuid);

    const page = await harness.upstreams.identity!.auditReport(query, harness.call);
    expect(page.rows.filter((row) => !row.ok)).toHaveLength(25);
    const warnings = harness.memory.lines().filter((l) => l.msg === 'audit rows with unreadable records kept in place');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      upstream: 'identity',
      route: 'audit-report',
      requestId: 'req-test',
      unreadableRows: 25,
      positions: corrupted.slice(0, 20),
      firstReason: 'The audit record is not valid JSON.',
    });
  });
});
