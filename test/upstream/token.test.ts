/** The shared OAuth token: single flight, renewal ahead of expiry, refresh grant, 401 recovery. */
import { describe, expect, it, vi } from 'vitest';
import { UpstreamError } from '../../src/lib/errors.js';
import { closeAfterEachTest, fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness | undefined;
closeAfterEachTest(() => harness, () => (harness = undefined));

describe('token manager', { timeout: 10_000 }, () => {
  it('makes exactly one token request for 200 concurrent calls on a cold client', async () => {
    // 200 calls at once on a busy machine: the deadline is not what this test is about.
    harness = await startUpstreamHarness({ env: { UPSTREAM_TIMEOUT_MS: '15000' } });
    const { upstreams, sim, call } = harness;
    const pages = await Promise.all(
      Array.from({ length: 200 }, () => upstreams.identity!.auditReport(fullWindow(5), call)),
    );
    expect(pages.every((page) => page.rows.length === 5)).toBe(true);
    expect(sim.control.counters().token).toBe(1);
    expect(sim.control.counters().audit).toBe(200);
    expect(upstreams.stats().token).toMatchObject({ requests: 1, failures: 0 });
  });

  it('renews a token near expiry in the background with the refresh grant, without a 401', async () => {
    let clock = Date.now();
    harness = await startUpstreamHarness({ upstream: { now: () => clock } });
    const { upstreams, sim, call } = harness;
    await upstreams.identity!.auditReport(fullWindow(1), call);
    expect(sim.control.counters().tokenByGrant).toMatchObject({ client_credentials: 1 });

    // Just used again: no renewal on every call.
    clock += 60_000;
    await upstreams.identity!.auditReport(fullWindow(1), call);
    expect(sim.control.counters().token).toBe(1);

    // Less than 10 % of the 10799 s lifetime left: renewed ahead, the call itself does not wait.
    clock += 9_800_000;
    await upstreams.identity!.auditReport(fullWindow(1), call);
    await vi.waitFor(() => expect(sim.control.counters().tokenByGrant.refresh_token).toBe(1));
    await upstreams.identity!.auditReport(fullWindow(1), call);
    const counters = sim.control.counters();
    expect(counters.token).toBe(2);
    expect(counters.unauthorized).toBe(0);
    expect(harness.renewals.map((r) => `${r.kind}:${r.outcome}`)).toEqual([
      'client_credentials:success',
      'refresh_token:success',
    ]);
  });

  it('falls back to client_credentials when the refresh grant is refused', async () => {
    let clock = Date.now();
    harness = await startUpstreamHarness({ upstream: { now: () => clock } });
    const { upstreams, sim, call } = harness;
    await upstreams.identity!.auditReport(fullWindow(1), call);
    sim.control.refuseRefresh(1);
    clock += 11_000_000; // past expiry: callers wait for the new token
    const page = await upstreams.identity!.auditReport(fullWindow(1), call);
    expect(page.rows).toHaveLength(1);
    expect(sim.control.counters().tokenByGrant).toMatchObject({ client_credentials: 2, refresh_token: 1 });
  });

  it('recovers from tokens the upstream expired: one 401, one new token, one retry', async () => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    await upstreams.identity!.auditReport(fullWindow(1), call);
    sim.control.expireTokens();
    sim.control.resetCounters();

    const page = await upstreams.identity!.auditReport(fullWindow(3), call);
    expect(page.rows).toHaveLength(3);
    const counters = sim.control.counters();
    expect(counters).toMatchObject({ unauthorized: 1, token: 1, audit: 2 });
    expect(counters.tokenByGrant).toMatchObject({ refresh_token: 1 });
    expect(harness.callLines('audit-report').at(-1)).toMatchObject({ status: 200, credentialRetry: true });
  });

  it('renews once for many concurrent calls that all got a 401', async () => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    await upstreams.identity!.auditReport(fullWindow(1), call);
    sim.control.expireTokens({ refreshTokensToo: true });
    sim.control.resetCounters();

    await Promise.all(Array.from({ length: 50 }, () => upstreams.identity!.auditReport(fullWindow(1), call)));
    const counters = sim.control.counters();
    // Refresh refused (its refresh token expired too), then client_credentials: one renewal.
    expect(counters.tokenByGrant).toMatchObject({ refresh_token: 1, client_credentials: 1 });
    expect(counters.byStatus['400']).toBe(1);
    expect(counters.unauthorized).toBe(50);
    expect(counters.audit).toBe(100);
  });

  it('fails with UPSTREAM_UNAUTHORIZED on refused credentials, and the next call tries again', async () => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    sim.control.failNext(1, 401, { route: 'token' });

    const failures = await Promise.allSettled(
      Array.from({ length: 20 }, () => upstreams.identity!.auditReport(fullWindow(1), call)),
    );
    expect(sim.control.counters().token).toBe(1);
    for (const failure of failures) {
      expect(failure.status).toBe('rejected');
      const error = (failure as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error.code).toBe('UPSTREAM_UNAUTHORIZED');
      expect(error.message).not.toMatch(/http|127\.0\.0\.1|oauthtoken/i);
    }
    expect(sim.control.counters().audit).toBe(0);

    const page = await upstreams.identity!.auditReport(fullWindow(1), call);
    expect(page.rows).toHaveLength(1);
    expect(sim.control.counters().token).toBe(2);
  });

  it('fails with UPSTREAM_UNAUTHORIZED when the client secret is wrong', async () => {
    harness = await startUpstreamHarness({ env: { IDENTITY_CLIENT_SECRET: 'definitely-wrong-secret' } });
    const error = await harness.upstreams.identity!.auditReport(fullWindow(1), harness.call).catch((e) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAUTHORIZED', service: 'identity' });
    expect(harness.sim.control.counters().audit).toBe(0);
  });

  it('fails with UPSTREAM_UNAVAILABLE when the token endpoint keeps failing, without retrying a plain 500', async () => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    sim.control.failNext(1, 500, { route: 'token' });
    const error = await upstreams.identity!.auditReport(fullWindow(1), call).catch((e) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(sim.control.counters().token).toBe(1);
    await expect(upstreams.identity!.auditReport(fullWindow(1), call)).resolves.toBeDefined();
  });

  it('treats expires_in 0 as already expired: one renewal, then UNAUTHORIZED, and no stale reuse', async () => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    sim.control.setTokenLifetime(0);
    const error = await upstreams.identity!.auditReport(fullWindow(1), call).catch((e) => e);
    // The upstream refuses the expired token; the one renewal brings another expired one.
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAUTHORIZED' });
    expect(sim.control.counters()).toMatchObject({ token: 2, audit: 2 });
    sim.control.clearFaults();
    await expect(upstreams.identity!.auditReport(fullWindow(1), call)).resolves.toBeDefined();
  });

  it('bounds the wait for a hung token endpoint by the call deadline', async () => {
    harness = await startUpstreamHarness({ env: { UPSTREAM_TIMEOUT_MS: '300' } });
    const { upstreams, sim, call } = harness;
    sim.control.setLatency(60_000, 'token');
    const started = performance.now();
    const error = await upstreams.identity!.auditReport(fullWindow(1), call).catch((e) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(performance.now() - started).toBeLessThan(300 + 400);
  });
});
