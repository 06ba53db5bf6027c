/** Retries, Retry-After, the one deadline per call, and answers that do not fit their schema. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUpstreams, type GatewayUpstreams } from '../../src/upstream/index.js';
import { findLeakedSecrets, fullWindow, startUpstreamHarness, timed, type UpstreamHarness } from '../helpers/upstream.js';

const DEADLINE_MS = 1500;
/** For the tests that wait a deadline out. */
const SHORT_DEADLINE_MS = 300;
/** Far below the 60 s an upstream that hangs takes, far above what a busy machine adds to a deadline. */
const HUNG_BOUND_MS = 5000;

let harness: UpstreamHarness;
beforeAll(async () => {
  harness = await startUpstreamHarness({ env: { UPSTREAM_TIMEOUT_MS: String(DEADLINE_MS) } });
  // Warm the token so the tests below time the data call alone.
  await harness.upstreams.identity!.auditReport(fullWindow(1), harness.call);
});
beforeEach(() => {
  harness.sim.control.clearFaults();
  harness.sim.control.resetCounters();
  harness.sim.wire.clear();
});
afterAll(async () => {
  expect(findLeakedSecrets(harness)).toEqual([]);
  await harness.close();
});

const audit = () => timed(harness.upstreams.identity!.auditReport(fullWindow(2), harness.call));

/** Clients on the same simulator whose calls have SHORT_DEADLINE_MS; closed after the test. */
async function withShortDeadline<T>(run: (upstreams: GatewayUpstreams) => Promise<T>, baseUrl?: string): Promise<T> {
  const identity = { ...harness.config.identity!, ...(baseUrl ? { baseUrl } : {}) };
  const upstreams = createUpstreams({ ...harness.config, identity, upstreamTimeoutMs: SHORT_DEADLINE_MS });
  try {
    // Warm the token (unless the upstream is unreachable) so the test times the data call alone.
    if (!baseUrl) await upstreams.identity!.auditReport(fullWindow(1), harness.call);
    harness.sim.wire.clear();
    return await run(upstreams);
  } finally {
    await upstreams.close();
  }
}

describe('retries and deadline', { timeout: 10_000 }, () => {
  it('retries 503 twice then succeeds, and counts the retries in the log line', async () => {
    harness.sim.control.failNext(2, 503, { route: 'audit' });
    const { value, error } = await audit();
    expect(error).toBeUndefined();
    expect(value!.rows).toHaveLength(2);
    const received = harness.sim.wire.requests('audit');
    expect(received.map((r) => r.status)).toEqual([503, 503, 200]);
    // The same request each time, with the same token.
    expect(new Set(received.map((r) => JSON.stringify([r.query, r.headers.authorization]))).size).toBe(1);

    const line = harness.callLines('audit-report').at(-1)!;
    expect(line).toMatchObject({
      msg: 'upstream call',
      requestId: 'req-test',
      upstream: 'identity',
      method: 'GET',
      route: 'audit-report',
      path: '/analytics/reports/audit/',
      status: 200,
      retries: 2,
    });
    expect(typeof line.durationMs).toBe('number');
    expect(harness.calls.at(-1)).toMatchObject({ route: 'audit-report', status: 200, retries: 2, outcome: 'success' });
  });

  it.each([429, 502, 504])('retries %i', async (status) => {
    harness.sim.control.failNext(1, status, { route: 'audit' });
    const { error } = await audit();
    expect(error).toBeUndefined();
    expect(harness.sim.wire.requests('audit').map((r) => r.status)).toEqual([status, 200]);
  });

  it('does not retry a 500, and maps it to UPSTREAM_UNAVAILABLE', async () => {
    harness.sim.control.failNext(1, 500, { route: 'audit' });
    const { error } = await audit();
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(harness.sim.wire.requests('audit').map((r) => r.status)).toEqual([500]);
  });

  it('gives up on a persistent 503 with UPSTREAM_UNAVAILABLE within the deadline', async () => {
    const { error } = await withShortDeadline((u) => {
      harness.sim.control.failNext(1000, 503, { route: 'audit' });
      return timed(u.identity!.auditReport(fullWindow(2), harness.call));
    });
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'identity' });
    expect(error.message).not.toMatch(/http|127\.0\.0\.1|analytics/i);
    const statuses = harness.sim.wire.requests('audit').map((r) => r.status);
    // Retried while the deadline allows: on a busy machine the first attempt may take all of it. The
    // first three backoffs take at least 350 ms, so past the deadline there is no fourth attempt
    // (without it, all five would be made).
    expect(statuses.length).toBeGreaterThanOrEqual(1);
    expect(statuses.length).toBeLessThanOrEqual(3);
    expect(new Set(statuses)).toEqual(new Set([503]));
    const line = harness.callLines('audit-report').at(-1)!;
    expect(line).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', status: 503 });
    // On a busy machine the deadline may cut a last attempt before the simulator logged it.
    expect(line.retries).toBeGreaterThanOrEqual(statuses.length - 1);
    expect(line.retries).toBeLessThanOrEqual(statuses.length);
  });

  it('waits as long as Retry-After asks', async () => {
    harness.sim.control.failNext(1, 503, { route: 'audit', retryAfterSeconds: 1 });
    const { error, ms } = await audit();
    expect(error).toBeUndefined();
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(harness.sim.control.counters().audit).toBe(2);
  });

  it('fails at once when Retry-After asks for more than the deadline leaves', async () => {
    harness.sim.control.failNext(1, 429, { route: 'audit', retryAfterSeconds: 30 });
    const { error, ms } = await audit();
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    // Before the deadline it would otherwise wait out.
    expect(ms).toBeLessThan(DEADLINE_MS);
    expect(harness.sim.control.counters().audit).toBe(1);
  });

  it('holds the deadline against a hung upstream', async () => {
    const { error, ms } = await withShortDeadline((u) => {
      harness.sim.control.setLatency(60_000, 'audit');
      return timed(u.identity!.auditReport(fullWindow(2), harness.call));
    });
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', message: 'The identity service did not answer in time.' });
    expect(ms).toBeGreaterThanOrEqual(SHORT_DEADLINE_MS - 50);
    expect(ms).toBeLessThan(HUNG_BOUND_MS);
  });

  it('stops when the caller aborts', async () => {
    harness.sim.control.setLatency(60_000, 'audit');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const { error, ms } = await timed(
      harness.upstreams.identity!.auditReport(fullWindow(1), { ...harness.call, signal: controller.signal }),
    );
    // Ended by the abort, not by the deadline (which ends it with UPSTREAM_UNAVAILABLE).
    expect(error).toMatchObject({ name: 'CallerGoneError', detail: { upstream: 'identity', route: 'audit-report' } });
    expect(ms).toBeLessThan(HUNG_BOUND_MS);
  });

  const waitsForCredentials = [
    ['the token', 'token', (u: GatewayUpstreams, signal: AbortSignal): Promise<unknown> => u.identity!.auditReport(fullWindow(1), { ...harness.call, signal })],
    [
      'the session login',
      'session',
      (u: GatewayUpstreams, signal: AbortSignal): Promise<unknown> =>
        u.contentLibrary!.listUpdateSessionFiles(harness.sim.control.sessions()[0]!.id, { ...harness.call, signal }),
    ],
  ] as const;
  it.each(waitsForCredentials)('stops when the caller aborts while it waits for %s', async (_, route, call) => {
    // Cold clients: the call must wait for the credential, which the upstream is slow to give.
    const upstreams = createUpstreams(harness.config);
    try {
      harness.sim.control.setLatency(60_000, route);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const { error, ms } = await timed(call(upstreams, controller.signal));
      expect(error).toMatchObject({ name: 'CallerGoneError' });
      expect(ms).toBeLessThan(HUNG_BOUND_MS);
      expect(harness.sim.control.counters()).toMatchObject({ audit: 0, files: 0 });
    } finally {
      await upstreams.close();
    }
  });

  it('maps a refused connection to UPSTREAM_UNAVAILABLE within the deadline', async () => {
    const { error, ms } = await withShortDeadline(
      (u) => timed(u.identity!.auditReport(fullWindow(1), harness.call)),
      'http://127.0.0.1:9',
    );
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', message: 'The identity service could not be reached.' });
    expect(ms).toBeLessThan(HUNG_BOUND_MS);
  });
});

describe('answers that do not fit', { timeout: 10_000 }, () => {
  it('reports a body of the wrong shape as UPSTREAM_INVALID_RESPONSE, the zod issues in the log only', async () => {
    harness.sim.control.malformNext('audit', 1, { kind: 'shape' });
    const { error } = await audit();
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', service: 'identity' });
    expect(error.message).toBe('The identity service answered with an unexpected response.');
    expect(error.message).not.toMatch(/unexpected":|http|issue|header|data/);

    const line = harness.callLines('audit-report').at(-1)!;
    expect(line.code).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(line.err.detail.issues.length).toBeGreaterThan(0);
    expect(line.err.detail.issues.map((i: { path: string }) => i.path)).toContain('header');
  });

  it('reports a truncated body as UPSTREAM_INVALID_RESPONSE', async () => {
    harness.sim.control.malformNext('audit', 1, { kind: 'truncated' });
    const { error } = await audit();
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', detail: { problem: 'body is not JSON' } });
  });

  it('reports a malformed file list as UPSTREAM_INVALID_RESPONSE', async () => {
    const id = harness.sim.control.sessions()[0]!.id;
    harness.sim.control.malformNext('files', 1, { kind: 'shape' });
    const error = await harness.upstreams.contentLibrary!.listUpdateSessionFiles(id, harness.call).catch((e) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', service: 'content-library' });
  });

  it('reports a malformed token answer as UPSTREAM_INVALID_RESPONSE, and recovers', async () => {
    const upstreams = harness.recreate();
    harness.sim.control.malformNext('token', 1, { kind: 'shape' });
    const error = await upstreams.identity!.auditReport(fullWindow(1), harness.call).catch((e) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE' });
    await expect(upstreams.identity!.auditReport(fullWindow(1), harness.call)).resolves.toBeDefined();
    await upstreams.close();
  });
});
