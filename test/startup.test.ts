import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { runGateway, type GatewayProcess } from './helpers/process.js';
import { simulatorEnv } from './helpers/simulator-env.js';

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

describe('start-up in demo mode (the README first command)', () => {
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
  }, 60_000);
});

describe('start-up refusals', () => {
  it('refuses upstream mode without caller authentication, naming the variable, exit code 1', async () => {
    const gateway = started({
      IDENTITY_BASE_URL: 'http://127.0.0.1:9',
      IDENTITY_CLIENT_ID: 'gateway',
      IDENTITY_CLIENT_SECRET: 'client-secret-that-must-not-leak',
    });
    expect(await gateway.exited()).toBe(1);
    expect(gateway.stderr()).toMatch(/GATEWAY_API_KEYS/);
    expect(gateway.stderr() + gateway.stdout()).not.toContain('client-secret-that-must-not-leak');
  }, 30_000);

  it('stops on invalid configuration with one message naming each variable', async () => {
    const gateway = started({ PORT: 'eighty', UPSTREAM_TIMEOUT_MS: 'soon', CONTENT_LIBRARY_PASSWORD: 'pw-must-not-leak' });
    expect(await gateway.exited()).toBe(1);
    const stderr = gateway.stderr();
    expect(stderr).toMatch(/PORT/);
    expect(stderr).toMatch(/UPSTREAM_TIMEOUT_MS/);
    expect(stderr).toMatch(/CONTENT_LIBRARY_USERNAME/);
    expect(stderr).not.toContain('pw-must-not-leak');
  }, 30_000);
});

describe('graceful shutdown', () => {
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
    const slow = post(url, '{ auditEvents(first: 2) { edges { cursor } } }', { 'x-api-key': 'test-key' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const exit = gateway.stop('SIGTERM');

    const response = await slow;
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.data.auditEvents.edges).toHaveLength(2);
    expect(await exit).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 30_000);
});
