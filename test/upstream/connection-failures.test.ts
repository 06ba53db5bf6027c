/** Connections that fail: which are retried, how often, and what the caller and the log see. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/lib/config.js';
import { SESSION_IDS } from '../../simulator/index.js';
import { createUpstreams, type GatewayUpstreams } from '../../src/upstream/index.js';
import { startCuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy.js';
import { fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness;
let proxy: CuttingProxy;
const opened: GatewayUpstreams[] = [];

beforeAll(async () => {
  // No content library login: every call through the proxy is a GET.
  harness = await startUpstreamHarness({ simulator: { users: null } });
  proxy = await startCuttingProxy(harness.sim.url);
});
beforeEach(() => harness.sim.wire.clear());
afterAll(async () => {
  await Promise.all(opened.map((u) => u.close()));
  await proxy.close();
  await harness.close();
});

/** Upstream clients with their own deadline and base URLs; short backoffs keep the retries quick. */
function upstreamsWith(deadlineMs: number, change: (config: Config) => Partial<Config>): GatewayUpstreams {
  const config = { ...harness.config, upstreamTimeoutMs: deadlineMs };
  const upstreams = createUpstreams({ ...config, ...change(config) }, { retry: { baseDelayMs: 10, maxDelayMs: 40 } });
  opened.push(upstreams);
  return upstreams;
}

const throughProxy = (deadlineMs: number) =>
  upstreamsWith(deadlineMs, (c) => ({ contentLibrary: { ...c.contentLibrary!, url: proxy.url, credentials: undefined } }));

const files = (upstreams: GatewayUpstreams) =>
  upstreams.contentLibrary!.listUpdateSessionFiles(SESSION_IDS.ready, harness.call);

describe('connection failures', { timeout: 10_000 }, () => {
  it.each([
    ['closed before the answer (a keep-alive peer gone: UND_ERR_SOCKET)', 'close'],
    ['reset before the answer (ECONNRESET)', 'reset'],
  ] as const)('retries a GET whose connection was %s', async (_case, how) => {
    const upstreams = throughProxy(3000);
    proxy.cutNext(2, how);
    const before = proxy.cuts();
    await expect(files(upstreams)).resolves.not.toHaveLength(0);
    expect(proxy.cuts() - before).toBe(2);
    expect(harness.sim.wire.requests('files').map((r) => r.status)).toEqual([200]);
    expect(harness.callLines('update-session-files').at(-1)).toMatchObject({ status: 200, retries: 2 });
  });

  it('gives up on a connection cut every time with UPSTREAM_UNAVAILABLE, naming the cause in the log only', async () => {
    const upstreams = throughProxy(400);
    proxy.cutNext(1000, 'close');
    const before = proxy.cuts();
    const error = await files(upstreams).catch((e: unknown) => e);
    proxy.cutNext(0, 'close');
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', message: 'The content library service could not be reached.' });
    expect(proxy.cuts() - before).toBeGreaterThan(1);
    expect(harness.sim.wire.requests()).toEqual([]);
    const line = harness.callLines('update-session-files').at(-1)!;
    expect(line).toMatchObject({ msg: 'upstream call failed', code: 'UPSTREAM_UNAVAILABLE', retries: proxy.cuts() - before - 1 });
    expect(line.err.detail).toMatchObject({ failure: 'connection', errorCode: 'UND_ERR_SOCKET' });
  });

  // Retried: when the 300 ms deadline passes during a connect attempt rather than between two, the
  // call ends as timed out, which is right but not what this test is about.
  it('repeats a token request whose connection was refused (it cannot have been sent), within the deadline', { retry: 2 }, async () => {
    const offline = upstreamsWith(300, (c) => ({ identity: { ...c.identity!, baseUrl: 'http://127.0.0.1:9' } }));
    const error = await offline.identity!.auditReport(fullWindow(1), harness.call).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', message: 'The identity service could not be reached.' });
    const line = harness.callLines('token').at(-1)!;
    expect(line.retries).toBeGreaterThan(0);
    expect(line.err.detail).toMatchObject({ failure: 'connection', errorCode: 'ECONNREFUSED' });
    // The data call fails with the token request's own error.
    expect(harness.callLines('audit-report').at(-1)!.err.detail).toMatchObject({ route: 'token', errorCode: 'ECONNREFUSED' });
  });

  it('repeats a GET whose connection was refused, as often as the policy allows', async () => {
    const offline = upstreamsWith(2000, (c) => ({ contentLibrary: { ...c.contentLibrary!, url: 'http://127.0.0.1:9', credentials: undefined } }));
    const error = await files(offline).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', message: 'The content library service could not be reached.' });
    const line = harness.callLines('update-session-files').at(-1)!;
    expect(line.retries).toBe(4);
    expect(line.status).toBeUndefined();
    expect(line.err.detail).toMatchObject({ errorCode: 'ECONNREFUSED' });
  });
});
