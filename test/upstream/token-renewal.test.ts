/**
 * The token requests as the identity service receives them, and when the shared token is renewed:
 * exact form bodies, the refresh token in use, background renewal and its pause, expiry.
 */
import type { Dispatcher } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { DEMO_CLIENT } from '../../simulator/index.js';
import { manualClock } from '../helpers/simulator-client.js';
import { closeAfterEachTest, fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness | undefined;
closeAfterEachTest(() => harness, () => (harness = undefined));

const T0 = Date.UTC(2026, 0, 1);
/** The simulator's default token lifetime. */
const LIFETIME_MS = 10_799_000;
/** 10 % of the lifetime before expiry. */
const RENEW_AT_MS = LIFETIME_MS - 1_079_900;

async function start(options: { scope?: string; lifetimeSeconds?: number; interceptors?: Dispatcher.DispatcherComposeInterceptor[] } = {}) {
  const clock = manualClock(T0);
  const h = await startUpstreamHarness({
    env: { IDENTITY_TOKEN_SCOPE: options.scope },
    upstream: { now: clock.now, interceptors: options.interceptors },
  });
  if (options.lifetimeSeconds !== undefined) h.sim.control.setTokenLifetime(options.lifetimeSeconds);
  harness = h;
  const at = (msAfterFirstToken: number) => clock.set(T0 + msAfterFirstToken);
  const audit = () => h.upstreams.identity!.auditReport(fullWindow(1), h.call);
  const tokenRequests = () => h.sim.wire.requests('token');
  const grants = () => tokenRequests().map((r) => r.form?.grant_type);
  const failNextToken = (status: number) => h.sim.control.failNext(1, status, { route: 'token' });
  return { h, at, audit, tokenRequests, grants, failNextToken };
}

/** Token answers to refresh grants lose their refresh_token, as from a server that does not rotate them. */
const withoutRotation: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  if (!String(opts.body ?? '').includes('grant_type=refresh_token')) return dispatch(opts, handler);
  const chunks: Buffer[] = [];
  return dispatch(opts, {
    onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
    onResponseStart: (controller, status, headers, message) => handler.onResponseStart?.(controller, status, headers, message),
    onResponseData: (_controller, chunk) => void chunks.push(chunk),
    onResponseEnd: (controller, trailers) => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
      delete body.refresh_token;
      handler.onResponseData?.(controller, Buffer.from(JSON.stringify(body)));
      handler.onResponseEnd?.(controller, trailers);
    },
    onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
  });
};

const basicFingerprint = (h: UpstreamHarness) =>
  `Basic ${h.sim.wire.fingerprint(Buffer.from(`${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`).toString('base64'))}`;

describe('token requests on the wire', { timeout: 10_000 }, () => {
  it('asks for client_credentials with HTTP Basic, no scope when none is configured, and uses the token it got', async () => {
    const { h, audit, tokenRequests } = await start();
    await audit();
    const [request, ...more] = tokenRequests();
    expect(more).toEqual([]);
    expect(request).toMatchObject({ method: 'POST', path: '/SAAS/auth/oauthtoken', query: {}, status: 200 });
    expect(request!.form).toEqual({ grant_type: 'client_credentials' });
    expect(request!.headers).toMatchObject({
      authorization: basicFingerprint(h),
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    });
    const [data] = h.sim.wire.requests('audit');
    expect(data!.headers.authorization).toBe(`Bearer ${h.sim.wire.fingerprint(h.tokenAnswers()[0]!.access_token)}`);
    expect(h.memory.lines().filter((l) => l.msg === 'access token renewed')).toEqual([
      expect.objectContaining({ upstream: 'identity', grant: 'client_credentials', expiresInSeconds: 10_799 }),
    ]);
  });

  it('reports each renewal with how long it took', async () => {
    const { h, audit } = await start();
    const started = performance.now();
    await audit();
    const elapsed = performance.now() - started;
    expect(h.renewals).toEqual([
      { service: 'identity', kind: 'client_credentials', outcome: 'success', durationMs: expect.any(Number) },
    ]);
    expect(h.renewals[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(h.renewals[0]!.durationMs).toBeLessThanOrEqual(Math.ceil(elapsed));
  });

  it('sends the configured scope with both grants, and the refresh token it was given', async () => {
    const { h, at, audit, tokenRequests } = await start({ scope: 'admin audit:read' });
    await audit();
    at(LIFETIME_MS); // expired: the call waits for the refresh
    await audit();
    const [first, refresh] = tokenRequests();
    expect(first!.form).toEqual({ grant_type: 'client_credentials', scope: 'admin audit:read' });
    expect(refresh!.form).toEqual({
      grant_type: 'refresh_token',
      refresh_token: h.sim.wire.fingerprint(h.tokenAnswers()[0]!.refresh_token!),
      scope: 'admin audit:read',
    });
    expect(refresh!.headers.authorization).toBe(basicFingerprint(h));
  });

  it('refreshes without a scope when none is configured, always with the newest refresh token', async () => {
    const { h, at, audit, tokenRequests } = await start();
    await audit();
    at(LIFETIME_MS);
    await audit();
    at(2 * LIFETIME_MS);
    await audit();
    const [, second, third] = tokenRequests();
    const answers = h.tokenAnswers();
    expect(second!.form).toEqual({ grant_type: 'refresh_token', refresh_token: h.sim.wire.fingerprint(answers[0]!.refresh_token!) });
    expect(third!.form).toEqual({ grant_type: 'refresh_token', refresh_token: h.sim.wire.fingerprint(answers[1]!.refresh_token!) });
    expect(tokenRequests().map((r) => r.status)).toEqual([200, 200, 200]);
    const dataTokens = h.sim.wire.requests('audit').map((r) => r.headers.authorization);
    expect(dataTokens).toEqual(answers.map((a) => `Bearer ${h.sim.wire.fingerprint(a.access_token)}`));
  });
});

describe('refresh tokens that do not rotate', { timeout: 10_000 }, () => {
  it('keeps the refresh token it has when a refresh answer carries none', async () => {
    const { h, at, audit, tokenRequests, grants } = await start({ interceptors: [withoutRotation] });
    await audit();
    at(LIFETIME_MS);
    await audit();
    at(2 * LIFETIME_MS);
    await audit().catch(() => undefined);
    const original = h.sim.wire.fingerprint(h.tokenAnswers()[0]!.refresh_token!);
    expect(grants().slice(0, 3)).toEqual(['client_credentials', 'refresh_token', 'refresh_token']);
    expect(tokenRequests().slice(1, 3).map((r) => r.form!.refresh_token)).toEqual([original, original]);
  });
});

describe('refresh grant failures', { timeout: 10_000 }, () => {
  it('a refresh that fails for another reason than refusal is not replaced by client_credentials; the refresh token is kept', async () => {
    const { h, at, audit, tokenRequests, grants, failNextToken } = await start();
    await audit();
    at(LIFETIME_MS);
    failNextToken(500);
    const started = performance.now();
    await expect(audit()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'identity' });
    const elapsed = performance.now() - started;
    expect(grants()).toEqual(['client_credentials', 'refresh_token']);
    const failure = h.renewals.at(-1)!;
    expect(failure).toMatchObject({ service: 'identity', kind: 'refresh_token', outcome: 'UPSTREAM_UNAVAILABLE' });
    expect(failure.durationMs).toBeLessThanOrEqual(Math.ceil(elapsed));

    await audit();
    expect(grants()).toEqual(['client_credentials', 'refresh_token', 'refresh_token']);
    const [, failed, next] = tokenRequests();
    expect(next!.form!.refresh_token).toBe(failed!.form!.refresh_token);
    expect(h.upstreams.stats().token).toEqual({ requests: 3, byGrant: { client_credentials: 1, refresh_token: 2 }, failures: 1 });
  });

  it('a refused refresh token is forgotten: after a failed fallback, the next renewal is client_credentials', async () => {
    const { h, at, audit, tokenRequests, grants, failNextToken } = await start();
    await audit();
    at(LIFETIME_MS);
    failNextToken(400); // the refresh grant: refused
    failNextToken(500); // the client_credentials fallback: fails
    await expect(audit()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(grants()).toEqual(['client_credentials', 'refresh_token', 'client_credentials']);
    expect(h.memory.lines().filter((l) => l.msg === 'refresh grant refused; falling back to client_credentials')).toEqual([
      expect.objectContaining({ upstream: 'identity', requestId: 'req-test' }),
    ]);

    await audit();
    expect(grants()).toEqual(['client_credentials', 'refresh_token', 'client_credentials', 'client_credentials']);
    expect(tokenRequests().map((r) => r.status)).toEqual([200, 400, 500, 200]);
    expect(h.renewals.map((r) => `${r.kind}:${r.outcome}`)).toEqual([
      'client_credentials:success',
      'refresh_token:UPSTREAM_UNAUTHORIZED',
      'client_credentials:UPSTREAM_UNAVAILABLE',
      'client_credentials:success',
    ]);
  });
});

describe('renewal ahead of expiry', { timeout: 10_000 }, () => {
  it('a failed background renewal keeps the current token in use and pauses renewals for 5 s', async () => {
    const { h, at, audit, tokenRequests, grants, failNextToken } = await start();
    await audit();
    at(RENEW_AT_MS);
    failNextToken(500);
    await expect(audit()).resolves.toBeDefined();
    await vi.waitFor(() => expect(h.renewals.at(-1)).toMatchObject({ kind: 'refresh_token', outcome: 'UPSTREAM_UNAVAILABLE' }));

    at(RENEW_AT_MS + 4_999);
    await audit();
    expect(grants()).toEqual(['client_credentials', 'refresh_token']);

    at(RENEW_AT_MS + 5_000);
    await audit();
    await vi.waitFor(() => expect(grants()).toEqual(['client_credentials', 'refresh_token', 'refresh_token']));
    await vi.waitFor(() => expect(tokenRequests().map((r) => r.status)).toEqual([200, 500, 200]));
    expect(h.sim.wire.requests('audit').map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(h.upstreams.stats().token).toMatchObject({ requests: 3, failures: 1 });
  });

  // Margin: 10 % of the lifetime, at least 60 s, at most half the lifetime.
  // Expiry: the lifetime less a transit skew of 5 s, at most 10 % of the lifetime.
  it.each([
    [10_799, RENEW_AT_MS, LIFETIME_MS - 5_000],
    [300, 240_000, 295_000],
    [100, 50_000, 95_000],
    [20, 10_000, 18_000],
  ])('a %i s token is renewed in the background from %i ms on, and waited for from %i ms on', async (lifetime, renewAt, expiresAt) => {
    const { at, audit, grants, failNextToken } = await start({ lifetimeSeconds: lifetime });
    await audit();
    at(renewAt - 1);
    await audit();
    expect(grants()).toEqual(['client_credentials']);

    // From renewAt the call is served at once; the renewal runs (and here fails) behind it.
    at(renewAt);
    failNextToken(500);
    await expect(audit()).resolves.toBeDefined();
    await vi.waitFor(() => expect(grants()).toHaveLength(2));

    at(expiresAt - 1);
    failNextToken(500);
    await expect(audit()).resolves.toBeDefined();
    await vi.waitFor(() => expect(grants()).toHaveLength(3));

    // From expiresAt the call waits for the renewal, and so shares its failure.
    at(expiresAt);
    failNextToken(500);
    await expect(audit()).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(grants()).toHaveLength(4);
  });
});
