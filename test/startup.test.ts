import { Agent as HttpAgent, get as httpGet } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../simulator/index.js';
import { runGateway, type GatewayProcess } from './helpers/process.js';
import { simulatorEnv } from './helpers/simulator-env.js';

/** Up to three of these tests run at once (describe.concurrent): a start-up can wait behind the others. */
const PROCESS_TEST_TIMEOUT_MS = 90_000;

const running: GatewayProcess[] = [];
const started = (env: Record<string, string>) => {
  const gateway = runGateway(env);
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

/** Sends an audit query and resolves once the simulator has received its call: the request is then in flight in the gateway. */
async function auditInFlight(sim: Simulator, url: string): Promise<{ answer: Promise<Response> }> {
  const before = sim.control.counters().audit;
  const answer = post(url, '{ auditEvents(first: 2) { edges { cursor } } }', { 'x-api-key': 'test-key' });
  await vi.waitFor(() => expect(sim.control.counters().audit).toBeGreaterThan(before), { timeout: 20_000, interval: 20 });
  return { answer };
}

describe.concurrent('start-up in demo mode (the README first command)', () => {
  it('serves GraphiQL, health and a working query over simulator data, then stops on SIGTERM with 0', async () => {
    const gateway = started({});
    const url = await gateway.ready;
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

    expect(await gateway.stop('SIGTERM')).toBe(0);
  }, PROCESS_TEST_TIMEOUT_MS);
});

describe.concurrent('start-up refusals', () => {
  it('refuses upstream mode without caller authentication, naming the variable, exit code 1', async () => {
    const gateway = started({
      IDENTITY_BASE_URL: 'http://127.0.0.1:9',
      IDENTITY_CLIENT_ID: 'gateway',
      IDENTITY_CLIENT_SECRET: 'client-secret-that-must-not-leak',
    });
    expect(await gateway.exited()).toBe(1);
    expect(gateway.stderr()).toMatch(/GATEWAY_API_KEYS/);
    expect(gateway.stderr() + gateway.stdout()).not.toContain('client-secret-that-must-not-leak');
  }, PROCESS_TEST_TIMEOUT_MS);

  it('stops on invalid configuration with one message naming each variable', async () => {
    const gateway = started({ PORT: 'eighty', UPSTREAM_TIMEOUT_MS: 'soon', CONTENT_LIBRARY_PASSWORD: 'pw-must-not-leak' });
    expect(await gateway.exited()).toBe(1);
    const stderr = gateway.stderr();
    expect(stderr).toMatch(/PORT/);
    expect(stderr).toMatch(/UPSTREAM_TIMEOUT_MS/);
    expect(stderr).toMatch(/CONTENT_LIBRARY_USERNAME/);
    expect(stderr).not.toContain('pw-must-not-leak');
  }, PROCESS_TEST_TIMEOUT_MS);
});

describe.concurrent('graceful shutdown', () => {
  let sim: Simulator;
  afterAll(async () => sim?.close());

  it('lets an in-flight request finish during SIGTERM, then exits 0', async () => {
    sim = await startSimulator();
    const gateway = started({
      ...simulatorEnv(sim),
      GATEWAY_API_KEYS: 'test-key',
    });
    const url = await gateway.ready;
    sim.control.setLatency(1500, 'audit');
    const { answer: slow } = await auditInFlight(sim, url);
    const exit = gateway.stop('SIGTERM');

    const response = await slow;
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.data.auditEvents.edges).toHaveLength(2);
    expect(await exit).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, PROCESS_TEST_TIMEOUT_MS);
});

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** GET on a fresh connection (no pooled socket), so a closed listener shows as a refusal. */
function getFresh(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', reject);
  });
}

describe.concurrent('demo mode options', () => {
  it('honours SIMULATOR_PORT, logs the simulator URL, and writes readable lines with LOG_PRETTY', async () => {
    const simulatorPort = await freePort();
    const gateway = started({ SIMULATOR_PORT: String(simulatorPort), LOG_PRETTY: 'true' });
    const url = await gateway.ready;
    const out = gateway.stdout();
    expect(out).toContain(`DEMO MODE`);
    expect(out).toContain(`http://127.0.0.1:${simulatorPort}`);
    expect(out.split('\n')[0]).not.toMatch(/^\{/);
    // The simulator answers there: its token endpoint refuses an empty grant with an OAuth error.
    const token = await fetch(`http://127.0.0.1:${simulatorPort}/SAAS/auth/oauthtoken`, { method: 'POST' });
    expect(token.status).toBeGreaterThanOrEqual(400);
    expect(token.status).toBeLessThan(500);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(await gateway.stop('SIGINT')).toBe(0);
  }, PROCESS_TEST_TIMEOUT_MS);
});

describe.concurrent('listen failures', () => {
  const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at |Unhandled 'error' event/);

  it('names PORT when the port is in use: one line, exit 1, no stack', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const gateway = started({ PORT: String(port), GATEWAY_API_KEYS: 'k', IDENTITY_BASE_URL: 'http://127.0.0.1:9', IDENTITY_CLIENT_ID: 'c', IDENTITY_CLIENT_SECRET: 's' });
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
      const gateway = started({ PORT: String(port) });
      expect(await gateway.exited()).toBe(1);
      expect(gateway.stderr().trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`PORT: port ${port} .*already in use`))]);
      expect(gateway.stdout()).toBe('');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, PROCESS_TEST_TIMEOUT_MS);

  it('names HOST when the address is not one of this machine', async () => {
    const gateway = started({ HOST: '203.0.113.7', GATEWAY_API_KEYS: 'k', IDENTITY_BASE_URL: 'http://127.0.0.1:9', IDENTITY_CLIENT_ID: 'c', IDENTITY_CLIENT_SECRET: 's' });
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
      const gateway = started({ SIMULATOR_PORT: String(port) });
      expect(await gateway.exited()).toBe(1);
      expect(gateway.stderr()).toMatch(new RegExp(`SIMULATOR_PORT: port ${port} .*already in use`));
      noStack(gateway.stderr());
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, PROCESS_TEST_TIMEOUT_MS);
});

describe.concurrent('drain', () => {
  let sim: Simulator;
  afterAll(async () => sim?.close());

  it('answers /readyz 503 and still accepts connections for SHUTDOWN_DELAY_MS, then finishes in-flight work and exits', async () => {
    sim = await startSimulator();
    // A delay and a latency with room for a busy machine between the signal and the checks below.
    const gateway = started({ ...simulatorEnv(sim), GATEWAY_API_KEYS: 'test-key', SHUTDOWN_DELAY_MS: '4000' });
    const url = await gateway.ready;
    // An idle keep-alive connection, as a load balancer or client pool keeps one.
    const agent = new HttpAgent({ keepAlive: true });
    const idleClosed = new Promise<void>((resolve) => {
      httpGet(`${url}/healthz`, { agent }, (response) => {
        response.resume();
        response.socket.once('close', () => resolve());
      });
    });
    sim.control.setLatency(5000, 'audit');
    const { answer: slow } = await auditInFlight(sim, url);
    const exit = gateway.stop('SIGTERM');
    // The drain starts when the process handles the signal, which a busy machine can delay.
    await vi.waitFor(() => expect(gateway.stdout()).toContain('draining: /readyz answers 503'), { timeout: 10_000 });

    expect(await getFresh(`${url}/readyz`)).toBe(503);
    expect(await getFresh(`${url}/healthz`)).toBe(200);

    const response = await slow;
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).data.auditEvents.edges).toHaveLength(2);
    expect(await exit).toBe(0);
    await idleClosed;
    agent.destroy();
    await expect(getFresh(`${url}/healthz`)).rejects.toThrow();
  }, PROCESS_TEST_TIMEOUT_MS);

  it('exits as soon as the delay is over when nothing is in flight, even with an idle keep-alive client', async () => {
    const gateway = started({ GATEWAY_API_KEYS: 'k', IDENTITY_BASE_URL: 'http://127.0.0.1:9', IDENTITY_CLIENT_ID: 'c', IDENTITY_CLIENT_SECRET: 's', SHUTDOWN_DELAY_MS: '200' });
    const url = await gateway.ready;
    const agent = new HttpAgent({ keepAlive: true });
    await new Promise<void>((resolve) => httpGet(`${url}/healthz`, { agent }, (r) => r.resume().on('end', resolve)));
    const signalled = Date.now();
    expect(await gateway.stop('SIGTERM')).toBe(0);
    // Node's keep-alive timeout is 5 s: a socket left open would hold the process that long.
    expect(Date.now() - signalled).toBeLessThan(4000);
    agent.destroy();
  }, PROCESS_TEST_TIMEOUT_MS);
});
