/**
 * A token grant or session login that meets a connection error or 502/503/504 is retried like a
 * GET, within the deadline of the call waiting for it: the caller never sees the blip.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_IDS } from '../../simulator/index.js';
import { fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('token grant', () => {
  it.each([502, 503, 504])('is retried after a %s, and the audit call succeeds', async (status) => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    sim.control.failNext(2, status, { route: 'token' });
    const page = await upstreams.identity!.auditReport(fullWindow(5), call);
    expect(page.rows).toHaveLength(5);
    expect(sim.control.counters().token).toBe(3);
    expect(harness.callLines('token').at(-1)).toMatchObject({ status: 200, retries: 2 });
  });

  it('is retried after the connection drops before an answer', async () => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    sim.control.hostileNext('token', 'drop-connection');
    await expect(upstreams.identity!.auditReport(fullWindow(5), call)).resolves.toMatchObject({ rows: expect.any(Array) });
    expect(sim.control.counters().token).toBe(2);
  });

  it('gives up within the deadline when the endpoint stays unavailable', async () => {
    harness = await startUpstreamHarness({ env: { UPSTREAM_TIMEOUT_MS: '1500' }, upstream: { retry: { baseDelayMs: 200, maxDelayMs: 400 } } });
    const { upstreams, sim, call } = harness;
    sim.control.failNext(100, 503, { route: 'token' });
    const error = await upstreams.identity!.auditReport(fullWindow(5), call).catch((e) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    const tokenCalls = sim.control.counters().token;
    expect(tokenCalls).toBeGreaterThan(1);
    expect(tokenCalls).toBeLessThanOrEqual(5);
  });
});

describe('content library session login', () => {
  it.each([502, 503, 504])('is retried after a %s, and the files call succeeds', async (status) => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    sim.control.failNext(1, status, { route: 'session' });
    const files = await upstreams.contentLibrary!.listUpdateSessionFiles(SESSION_IDS.ready, call);
    expect(files.length).toBeGreaterThan(0);
    expect(sim.control.counters().session).toBe(2);
  });

  it('is retried after the connection drops before an answer', async () => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    sim.control.hostileNext('session', 'drop-connection');
    await expect(upstreams.contentLibrary!.listUpdateSessionFiles(SESSION_IDS.ready, call)).resolves.toBeDefined();
    expect(sim.control.counters().session).toBe(2);
  });
});
