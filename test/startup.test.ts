import { Agent as HttpAgent, get as httpGet } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../simulator/index.js';
import { startHoldingProxy, type HoldingProxy } from './helpers/holding-proxy.js';
import { builtGateway } from './helpers/built-gateway.js';
import { runGateway, type GatewayProcess } from './helpers/process.js';
import { simulatorEnv } from './helpers/simulator-env.js';
import { exchange } from './helpers/listen.js';

/** Up to three groups of these tests run at once (describe.concurrent): a start-up can wait behind the others. */
const PROCESS_TEST_TIMEOUT_MS = 90_000;

const running: GatewayProcess[] = [];
/**
 * The production build, which starts in a fraction of the CPU time tsx needs to load src/ module by
 * module; `npm start` itself (tsx) is test/soak/npm-start-demo.test.ts's.
 */
const started = async (env: Record<string, string>) => {
  const gateway = runGateway(env, await builtGateway());
  running.push(gateway);
  return gateway;
};
afterAll(async () => {
  await Promise.all(running.map((g) => g.stop('SIGKILL')));
});

const post = (url: string, query: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });

/** Sends an audit query and resolves once its upstream call is held by the proxy: the request is then in flight in the gateway. */
async function auditInFlight(proxy: HoldingProxy, url: string): Promise<{ answer: Promise<Response> }> {
  const answer = post(url, '{ auditEvents(first: 2) { edges { cursor } } }', { 'x-api-key': 'test-key' });
  await proxy.held();
  return { answer };
}

/** The simulator behind a proxy that holds audit calls until the test lets them go. */
async function simulatorHoldingAudit(): Promise<{ sim: Simulator; proxy: HoldingProxy; env: Record<string, string> }> {
  const sim = await startSimulator();
  const proxy = await startHoldingProxy(sim.url, (request) => request.url!.startsWith('/analytics/reports/audit'));
  return { sim, proxy, env: { ...simulatorEnv(sim), IDENTITY_BASE_URL: proxy.url } };
}

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// One process for every check of a demo start-up (each start costs seconds of CPU), checked in order.
describe.concurrent('start-up in demo mode, with SIMULATOR_PORT and LOG_PRETTY', () => {
  let gateway: GatewayProcess;
  let url: string;
  let simulatorPort: number;
  beforeAll(async () => {
    simulatorPort = await freePort();
    gateway = await started({ SIMULATOR_PORT: String(simulatorPort), LOG_PRETTY: 'true', SHUTDOWN_DELAY_MS: '200' });
    url = await gateway.ready;
  }, PROCESS_TEST_TIMEOUT_MS);

  it.sequential('serves GraphiQL, health and a working query over simulator data', async () => {
    expect(gateway.stdout()).toMatch(/DEMO MODE/);

    const page = await fetch(`${url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('GraphiQL');

    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    const response = await post(url, '{ auditEvents(first: 3) { edges { node { __typename ... on AuditRecord { uuid objectType } } } pageInfo { hasNextPage } } }');
    const body = (await response.json()) as any;
    expect(body.errors).toBeUndefined();
    expect(body.data.auditEvents.edges).toHaveLength(3);
    expect(body.data.auditEvents.pageInfo.hasNextPage).toBe(true);
  });

  it.sequential('honours SIMULATOR_PORT, logs the simulator URL, and writes readable lines with LOG_PRETTY', async () => {
    const out = gateway.stdout();
    expect(out).toContain(`DEMO MODE`);
    expect(out).toContain(`http://127.0.0.1:${simulatorPort}`);
    expect(out.split('\n')[0]).not.toMatch(/^\{/);
    // The simulator answers there: its token endpoint refuses an empty grant with an OAuth error.
    const token = await fetch(`http://127.0.0.1:${simulatorPort}/SAAS/auth/oauthtoken`, { method: 'POST' });
    expect(token.status).toBeGreaterThanOrEqual(400);
    expect(token.status).toBeLessThan(500);
  });

  it.sequential('answers a malformed request line, and a missing or malformed Host, with a JSON 400', async () => {
    const port = Number(new URL(url).port);
    for (const [bytes, message] of [
      ['GARBAGE\r\n\r\n', 'The request is not valid HTTP.'],
      ['GET /healthz HTTP/1.1\r\nhost: a b\r\n\r\n', 'The Host header is not a host name or address with an optional port.'],
      ['GET /healthz HTTP/1.1\r\n\r\n', 'The request has no Host header.'],
    ]) {
      const answer = await exchange(port, bytes!);
      expect(answer.slice(0, answer.indexOf('\r\n'))).toBe('HTTP/1.1 400 Bad Request');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });
    }
  });

  it.sequential('exits 0 on SIGINT as soon as the delay is over when nothing is in flight, even with an idle keep-alive client', async () => {
    const agent = new HttpAgent({ keepAlive: true });
    await new Promise<void>((resolve) => httpGet(`${url}/healthz`, { agent }, (r) => r.resume().on('end', resolve)));
    const signalled = Date.now();
    expect(await gateway.stop('SIGINT')).toBe(0);
    // Node's keep-alive timeout is 5 s: a socket left open would hold the process that long after the 200 ms delay.
    expect(Date.now() - signalled).toBeLessThan(5000);
    agent.destroy();
  }, PROCESS_TEST_TIMEOUT_MS);
});

describe.concurrent('start-up refusals', () => {
  it('refuses upstream mode without caller authentication, naming the variable, exit code 1', async () => {
    const gateway = await started({
      IDENTITY_BASE_URL: 'http://127.0.0.1:9',
      IDENTITY_CLIENT_ID: 'gateway',
      IDENTITY_CLIENT_SECRET: 'client-secret-that-must-not-leak',
    });
    expect(await gateway.exited()).toBe(1);
    expect(gateway.stderr()).toMatch(/GATEWAY_API_KEYS/);
    expect(gateway.stderr() + gateway.stdout()).not.toContain('client-secret-that-must-not-leak');
  }, PROCESS_TEST_TIMEOUT_MS);

  it('stops on invalid configuration with one message naming each variable', async () => {
    const gateway = await started({ PORT: 'eighty', UPSTREAM_TIMEOUT_MS: 'soon', CONTENT_LIBRARY_PASSWORD: 'pw-must-not-leak' });
    expect(await gateway.exited()).toBe(1);
    const stderr = gateway.stderr();
    expect(stderr).toMatch(/PORT/);
    expect(stderr).toMatch(/UPSTREAM_TIMEOUT_MS/);
    expect(stderr).toMatch(/CONTENT_LIBRARY_USERNAME/);
    expect(stderr).not.toContain('pw-must-not-leak');
  }, PROCESS_TEST_TIMEOUT_MS);
});

/** GET on a fresh connection (no pooled socket), so a closed listener shows as a refusal. */
function getFresh(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', reject);
  });
}

describe.concurrent('listen failures', () => {
  const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at |Unhandled 'error' event/);

  it('names PORT when the port is in use: one line, exit 1, no stack', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const gateway = await started({ PORT: String(port), GATEWAY_API_KEYS: 'k', IDENTITY_BASE_URL: 'http://127.0.0.1:9', IDENTITY_CLIENT_ID: 'c', IDENTITY_CLIENT_SECRET: 's' });
      expect(await gateway.exited()).toBe(1);
      expect(gateway.stderr().trim().split('\n')).toHaveLength(1);
      expect(gateway.stderr()).toMatch(new RegExp(`PORT: port ${port} .*already in use`));
      noStack(gateway.stderr() + gateway.stdout());
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, PROCESS_TEST_TIMEOUT_MS);

  it('in demo mode, names PORT when the port is in use and says nothing else: no simulator is started', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const gateway = await started({ PORT: String(port) });
      expect(await gateway.exited()).toBe(1);
      expect(gateway.stderr().trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`PORT: port ${port} .*already in use`))]);
      expect(gateway.stdout()).toBe('');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, PROCESS_TEST_TIMEOUT_MS);

  it('names HOST when the address is not one of this machine', async () => {
    const gateway = await started({ HOST: '203.0.113.7', GATEWAY_API_KEYS: 'k', IDENTITY_BASE_URL: 'http://127.0.0.1:9', IDENTITY_CLIENT_ID: 'c', IDENTITY_CLIENT_SECRET: 's' });
    expect(await gateway.exited()).toBe(1);
    expect(gateway.stderr().trim().split('\n')).toHaveLength(1);
    expect(gateway.stderr()).toMatch(/HOST: cannot listen on "203\.0\.113\.7"/);
    noStack(gateway.stderr() + gateway.stdout());
  }, PROCESS_TEST_TIMEOUT_MS);

  it('names SIMULATOR_PORT when demo mode cannot start its simulator', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const gateway = await started({ SIMULATOR_PORT: String(port) });
      expect(await gateway.exited()).toBe(1);
      expect(gateway.stderr()).toMatch(new RegExp(`SIMULATOR_PORT: port ${port} .*already in use`));
      noStack(gateway.stderr());
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, PROCESS_TEST_TIMEOUT_MS);
});

describe.concurrent('drain', () => {
  let upstream: Awaited<ReturnType<typeof simulatorHoldingAudit>> | undefined;
  afterAll(async () => {
    await upstream?.proxy.close();
    await upstream?.sim.close();
  });

  it('answers /readyz 503 and still accepts connections for SHUTDOWN_DELAY_MS, then finishes in-flight work and exits 0', async () => {
    upstream = await simulatorHoldingAudit();
    const { proxy } = upstream;
    // A delay with room for a busy machine between the drain's log line and the two checks below.
    const gateway = await started({ ...upstream.env, GATEWAY_API_KEYS: 'test-key', SHUTDOWN_DELAY_MS: '3000' });
    const url = await gateway.ready;
    // An idle keep-alive connection, as a load balancer or client pool keeps one.
    const agent = new HttpAgent({ keepAlive: true });
    const idleClosed = new Promise<void>((resolve) => {
      httpGet(`${url}/healthz`, { agent }, (response) => {
        response.resume();
        response.socket.once('close', () => resolve());
      });
    });
    const { answer: slow } = await auditInFlight(proxy, url);
    const exit = gateway.stop('SIGTERM');
    // The drain starts when the process handles the signal, which a busy machine can delay.
    await vi.waitFor(() => expect(gateway.stdout()).toContain('draining: /readyz answers 503'), { timeout: 10_000 });

    expect(await getFresh(`${url}/readyz`)).toBe(503);
    expect(await getFresh(`${url}/healthz`)).toBe(200);

    // The upstream answers once the listener is closed: the request is still in flight then.
    await vi.waitFor(() => expect(gateway.stdout()).toContain('listener closed'), { timeout: 20_000 });
    proxy.release();
    const response = await slow;
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).data.auditEvents.edges).toHaveLength(2);
    expect(await exit).toBe(0);
    await idleClosed;
    agent.destroy();
    await expect(getFresh(`${url}/healthz`)).rejects.toThrow();
  }, PROCESS_TEST_TIMEOUT_MS);
});
