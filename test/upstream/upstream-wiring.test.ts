/**
 * How the configured services are wired, over real HTTP: one keep-alive pool per service, bounded
 * as configured, even when both share an origin; the body size cap, services left out of the
 * configuration, the closed-window audit cache, and close().
 */
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/lib/config.js';
import { SESSION_IDS } from '../../simulator/index.js';
import { createUpstreams, type GatewayUpstreams } from '../../src/upstream/index.js';
import { startHoldingProxy } from '../helpers/holding-proxy.js';
import { fullWindow, HOUR, startUpstreamHarness, timed, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness;
const opened: GatewayUpstreams[] = [];

beforeAll(async () => {
  harness = await startUpstreamHarness();
});
beforeEach(() => {
  harness.sim.control.clearFaults();
  harness.sim.wire.clear();
});
afterAll(async () => {
  await Promise.all(opened.splice(0).map((u) => u.close()));
  await harness.close();
});

function upstreamsWith(change: Partial<Config>): GatewayUpstreams {
  const upstreams = createUpstreams({ ...harness.config, ...change }, { retry: { maxRetries: 0 } });
  opened.push(upstreams);
  return upstreams;
}

const files = (upstreams: GatewayUpstreams) => upstreams.contentLibrary!.listUpdateSessionFiles(SESSION_IDS.ready, harness.call);
const audit = (upstreams: GatewayUpstreams) => upstreams.identity!.auditReport(fullWindow(2), harness.call);

/** A TCP relay to the simulator that counts the connections opened through it. */
async function startCountingRelay(target: string) {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('connection pools', { timeout: 15_000 }, () => {
  it('each service has its own pool of UPSTREAM_MAX_CONNECTIONS connections, even on one origin', async () => {
    const relay = await startCountingRelay(harness.sim.url);
    try {
      const { identity, contentLibrary } = harness.config;
      const upstreams = upstreamsWith({
        upstreamMaxConnections: 1,
        identity: { ...identity!, baseUrl: relay.url },
        contentLibrary: { ...contentLibrary!, url: relay.url },
      });
      await audit(upstreams);
      await files(upstreams);
      await Promise.all([audit(upstreams), files(upstreams), audit(upstreams), files(upstreams)]);
      expect(harness.sim.wire.requests().map((r) => r.route)).toEqual(
        expect.arrayContaining(['token', 'audit', 'session', 'files']),
      );
      expect(relay.connections()).toBe(2);
    } finally {
      await relay.close();
    }
  });

  it("one service's slow answers never hold up the other's calls on the same origin", async () => {
    // Both services on one origin, a proxy that holds audit calls until the test lets them go.
    let holding = false;
    const origin = await startHoldingProxy(harness.sim.url, (request) => holding && request.url!.startsWith('/analytics/reports/audit'));
    try {
      const upstreams = upstreamsWith({
        upstreamMaxConnections: 1,
        identity: { ...harness.config.identity!, baseUrl: origin.url },
        contentLibrary: { ...harness.config.contentLibrary!, url: origin.url },
      });
      await Promise.all([audit(upstreams), files(upstreams)]);
      holding = true;
      // The identity service's only connection is taken until the held answer comes.
      let slowDone = false;
      const slow = timed(audit(upstreams)).finally(() => (slowDone = true));
      await origin.held();
      const other = await timed(files(upstreams));
      expect(other.error).toBeUndefined();
      expect(slowDone).toBe(false);
      origin.release();
      expect((await slow).error).toBeUndefined();
    } finally {
      await origin.close();
    }
  });

  it('refuses a body over UPSTREAM_MAX_BODY_BYTES as UPSTREAM_INVALID_RESPONSE instead of reading it', async () => {
    const upstreams = upstreamsWith({ upstreamMaxBodyBytes: 64 * 1024 });
    await audit(upstreams);
    harness.sim.control.hostileNext('audit', 'oversize-body', { bytes: 256 * 1024 });
    await expect(audit(upstreams)).rejects.toMatchObject({
      code: 'UPSTREAM_INVALID_RESPONSE',
      message: 'The identity service answered with an unexpected response.',
      detail: { route: 'audit-report', problem: 'body exceeds the size limit' },
    });
  });
});

describe('services left out of the configuration', { timeout: 10_000 }, () => {
  it('without an identity service, the content library still answers', async () => {
    const upstreams = upstreamsWith({ identity: undefined });
    expect(upstreams.identity).toBeUndefined();
    await expect(files(upstreams)).resolves.not.toHaveLength(0);
    expect(upstreams.stats()).toMatchObject({ token: undefined, auditCache: undefined, session: { logins: 1 } });
  });

  it('without a content library, the identity service still answers', async () => {
    const upstreams = upstreamsWith({ contentLibrary: undefined });
    expect(upstreams.contentLibrary).toBeUndefined();
    await expect(audit(upstreams)).resolves.toMatchObject({ rows: [expect.anything(), expect.anything()] });
    expect(upstreams.stats()).toMatchObject({ token: { requests: 1 }, session: undefined });
  });
});

describe('the closed-window audit cache', { timeout: 10_000 }, () => {
  const closedWindow = () => ({ fromMillis: Date.now() - 72 * HOUR - 60_000, toMillis: Date.now() - 2 * HOUR, pageSize: 3, startIndex: 0 });

  it('answers a repeated read of a closed window without asking the identity service again', async () => {
    const upstreams = upstreamsWith({ auditCacheMaxBytes: 1024 * 1024 });
    const query = closedWindow();
    const first = await upstreams.identity!.auditReport(query, harness.call);
    await expect(upstreams.identity!.auditReport(query, harness.call)).resolves.toEqual(first);
    expect(harness.sim.wire.requests('audit')).toHaveLength(1);
    expect(upstreams.stats().auditCache).toMatchObject({ entries: 1 });
  });

  it('asks every time when AUDIT_CACHE_MAX_BYTES is 0', async () => {
    const upstreams = upstreamsWith({ auditCacheMaxBytes: 0 });
    const query = closedWindow();
    await upstreams.identity!.auditReport(query, harness.call);
    await upstreams.identity!.auditReport(query, harness.call);
    expect(harness.sim.wire.requests('audit')).toHaveLength(2);
    expect(upstreams.stats().auditCache).toBeUndefined();
  });
});

describe('close()', { timeout: 10_000 }, () => {
  it('closes the pools: a later call fails as unavailable and reaches no upstream', async () => {
    const upstreams = upstreamsWith({});
    await audit(upstreams);
    await upstreams.close();
    harness.sim.wire.clear();
    await expect(files(upstreams)).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    await expect(upstreams.identity!.auditReport(fullWindow(3), harness.call)).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(harness.sim.wire.requests()).toEqual([]);
  });
});
