/**
 * Token and session requests are POSTs retried like GETs (they change nothing a repeat could break),
 * a 400 there means refused credentials, and statuses elsewhere map by the table in error-mapping.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUpstreams } from '../../src/upstream/index.js';
import { findLeakedSecrets, fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness;
beforeAll(async () => {
  harness = await startUpstreamHarness({ env: { UPSTREAM_TIMEOUT_MS: '10000' } });
});
beforeEach(() => {
  harness.sim.control.clearFaults();
  harness.sim.control.resetCounters();
  harness.sim.wire.clear();
  harness.calls.length = 0;
});
afterAll(async () => {
  expect(findLeakedSecrets(harness)).toEqual([]);
  await harness.close();
});

const sessionId = () => harness.sim.control.sessions()[0]!.id;
const statusesOf = (route: 'token' | 'session' | 'audit') => harness.sim.wire.requests(route).map((r) => r.status);

describe('credential requests', { timeout: 20_000 }, () => {
  it('retries a token request answered 503, then serves the call', async () => {
    const cold = harness.recreate();
    harness.sim.control.failNext(1, 503, { route: 'token' });
    await expect(cold.identity!.auditReport(fullWindow(1), harness.call)).resolves.toBeDefined();
    expect(statusesOf('token')).toEqual([503, 200]);
  });

  it('retries a session login answered 503, and reports it under the session route', async () => {
    const cold = harness.recreate();
    harness.sim.control.failNext(1, 503, { route: 'session' });
    await expect(cold.contentLibrary!.listUpdateSessionFiles(sessionId(), harness.call)).resolves.toBeDefined();
    expect(statusesOf('session')).toEqual([503, 200]);
    expect(harness.calls.find((event) => event.method === 'POST')).toMatchObject({
      service: 'content-library',
      route: 'session',
      status: 200,
      retries: 1,
      outcome: 'success',
    });
  });

  it('reads a session login answered 400 as refused credentials', async () => {
    const cold = harness.recreate();
    harness.sim.control.failNext(1, 400, { route: 'session' });
    await expect(cold.contentLibrary!.listUpdateSessionFiles(sessionId(), harness.call)).rejects.toMatchObject({
      code: 'UPSTREAM_UNAUTHORIZED',
      message: "The content library service rejected the gateway's credentials.",
    });
  });

  it('logs in and reports a refused login without any event hooks', async () => {
    const plain = createUpstreams(harness.config);
    try {
      await expect(plain.contentLibrary!.listUpdateSessionFiles(sessionId(), harness.call)).resolves.toBeDefined();
      const refused = createUpstreams(harness.config);
      try {
        harness.sim.control.failNext(1, 401, { route: 'session' });
        await expect(refused.contentLibrary!.listUpdateSessionFiles(sessionId(), harness.call)).rejects.toMatchObject({
          code: 'UPSTREAM_UNAUTHORIZED',
        });
      } finally {
        await refused.close();
      }
    } finally {
      await plain.close();
    }
  });
});

describe('audit report without the cache', { timeout: 20_000 }, () => {
  it('answers with the rows of the identity service itself', async () => {
    const uncached = createUpstreams({ ...harness.config, auditCacheMaxBytes: 0 });
    try {
      const query = fullWindow(5, 2);
      const page = await uncached.identity!.auditReport(query, harness.call);
      const expected = harness.sim.control.events(query).slice(2, 7).map((event) => event.uuid);
      expect(page.rows.map((row) => (row.ok ? row.record.uuid : null))).toEqual(expected);
      expect(uncached.stats().auditCache).toBeUndefined();
    } finally {
      await uncached.close();
    }
  });
});

describe('audit report statuses', { timeout: 20_000 }, () => {
  it.each([
    [400, 'UPSTREAM_INVALID_RESPONSE', 'The identity service answered with an unexpected status.'],
    [404, 'UPSTREAM_INVALID_RESPONSE', 'The identity service answered with an unexpected status.'],
    [408, 'UPSTREAM_UNAVAILABLE', 'The identity service is unavailable.'],
    [500, 'UPSTREAM_UNAVAILABLE', 'The identity service is unavailable.'],
  ])('maps %i to %s', async (status, code, message) => {
    harness.sim.control.failNext(1, status, { route: 'audit' });
    await expect(harness.upstreams.identity!.auditReport(fullWindow(1), harness.call)).rejects.toMatchObject({
      code,
      service: 'identity',
      message,
    });
    expect(statusesOf('audit')).toEqual([status]);
  });

  it('maps a 429 whose Retry-After outlasts the deadline to UPSTREAM_UNAVAILABLE at once', async () => {
    harness.sim.control.failNext(1, 429, { route: 'audit', retryAfterSeconds: 60 });
    await expect(harness.upstreams.identity!.auditReport(fullWindow(1), harness.call)).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: 'The identity service is unavailable.',
    });
    expect(statusesOf('audit')).toEqual([429]);
  });

  it('maps a 500 from a credential route, or from a route with a not-found message, to UPSTREAM_UNAVAILABLE', async () => {
    harness.sim.control.failNext(1, 500, { route: 'session' });
    await expect(harness.recreate().contentLibrary!.listUpdateSessionFiles(sessionId(), harness.call)).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: 'The content library service is unavailable.',
    });
    harness.sim.control.failNext(1, 500, { route: 'files' });
    await expect(harness.upstreams.contentLibrary!.listUpdateSessionFiles(sessionId(), harness.call)).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: 'The content library service is unavailable.',
    });
  });

  it('reads a 200 whose body is cut short as an unexpected response', async () => {
    harness.sim.control.malformNext('audit', 1, { kind: 'truncated' });
    await expect(harness.upstreams.identity!.auditReport(fullWindow(1), harness.call)).rejects.toMatchObject({
      code: 'UPSTREAM_INVALID_RESPONSE',
      service: 'identity',
      message: 'The identity service answered with an unexpected response.',
    });
  });
});
