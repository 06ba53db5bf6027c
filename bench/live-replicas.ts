/**
 * The live tail across replicas (`npx tsx bench/live-replicas.ts [--quick]`): one gateway with 900
 * subscribers on one filter, against three gateways with 300 each, on one Redis and (as before
 * Redis was shared) each on its own. For each: upstream
 * audit calls per second at rest (counted in the simulator), CPU of each gateway at rest and per
 * event fanned out to every subscriber, and how long the last subscriber waited for an event.
 * Needs `redis-server` on the machine; every subscriber has a WebSocket of its own (graphql-ws).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type Client } from 'graphql-ws';
import { request } from 'undici';
import WebSocket from 'ws';
import { cpuMsOf } from './live.js';
import { API_KEY, buildGateway, startGateway, startSimulatorProcess, type GatewayChild } from './processes.js';
import { simulatorCounters } from './scenarios.js';

const quick = process.argv.includes('--quick');
const IDLE_MS = quick ? 3000 : 10_000;
const EVENTS = quick ? 3 : 10;
const TOTAL_SUBSCRIBERS = 900;
const ENV = { AUDIT_LIVE_POLL_MS: '500', AUDIT_LIVE_MAX_SUBSCRIPTIONS: '1000', REDIS_TIMEOUT_MS: '500' };
const SUBSCRIPTION = /* GraphQL */ `
  subscription Bench {
    auditEventAdded(filter: { objectType: "BenchEvent" }) {
      resumeAfter
      node { ... on AuditRecord { uuid } }
    }
  }
`;

interface Setup {
  readonly replicas: number;
  readonly shared: boolean;
  readonly upstreamCallsPerSecond: number;
  readonly idleCpuMsPerSecond: number[];
  readonly fanOutCpuMsPerEvent: number[];
  readonly deliveryMs: { readonly p50: number; readonly max: number };
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  process.on('exit', () => child.kill('SIGKILL'));
  for (let i = 0; i < 100; i++) {
    const ready = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (ready) return { url: `redis://127.0.0.1:${port}`, child };
    await sleep(50);
  }
  throw new Error('redis-server did not start');
}

/** Subscribes `count` WebSocket clients to `gateway`; `onRecord` sees every record each receives. */
async function subscribeAll(gateway: GatewayChild, count: number, onRecord: (uuid: string) => void): Promise<Client[]> {
  const clients: Client[] = [];
  let acknowledged = 0;
  for (let opened = 0; opened < count; ) {
    const batch = Math.min(50, count - opened);
    for (let i = 0; i < batch; i++) {
      const client = createClient({
        url: `${gateway.url.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { 'x-api-key': API_KEY },
        retryAttempts: 0,
        lazy: true,
        on: { connected: () => void acknowledged++ },
      });
      clients.push(client);
      client.subscribe<{ auditEventAdded: { node: { uuid: string } } }>(
        { query: SUBSCRIPTION },
        { next: (value) => value.data && onRecord(value.data.auditEventAdded.node.uuid), error: () => {}, complete: () => {} },
      );
    }
    opened += batch;
    const deadline = Date.now() + 60_000;
    while (acknowledged < opened) {
      if (Date.now() > deadline) throw new Error(`only ${acknowledged} of ${count} subscribers connected`);
      await sleep(20);
    }
  }
  return clients;
}

async function measure(replicas: number, simulatorUrl: string, redisUrl: string | undefined): Promise<Setup> {
  const env = { ...ENV, ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `bench-${replicas}:` } : {}) };
  const gateways = await Promise.all(Array.from({ length: replicas }, () => startGateway({ simulatorUrl, env })));
  const received = new Map<string, number>();
  const arrivals = new Map<string, number>();
  const onRecord = (uuid: string) => {
    const count = (received.get(uuid) ?? 0) + 1;
    received.set(uuid, count);
    if (count === TOTAL_SUBSCRIBERS) arrivals.set(uuid, Date.now());
  };
  const clients: Client[] = [];
  for (const gateway of gateways) clients.push(...(await subscribeAll(gateway, TOTAL_SUBSCRIBERS / replicas, onRecord)));
  await sleep(1000);

  const cpuAt = () => gateways.map((g) => cpuMsOf(g.pid));
  const countersBefore = await simulatorCounters(simulatorUrl);
  const cpuBefore = cpuAt();
  await sleep(IDLE_MS);
  const idleCpu = cpuAt().map((ms, i) => ((ms - cpuBefore[i]!) * 1000) / IDLE_MS);
  const countersAfter = await simulatorCounters(simulatorUrl);

  const delivery: number[] = [];
  const fanOut = gateways.map(() => 0);
  for (let i = 0; i < EVENTS; i++) {
    const before = cpuAt();
    const started = Date.now();
    const res = await request(`${simulatorUrl}/__simulator/insert-events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ count: 1, objectType: 'BenchEvent' }),
    });
    const uuid = ((await res.body.json()) as { events: { uuid: string }[] }).events[0]!.uuid;
    while (!arrivals.has(uuid)) {
      if (Date.now() - started > 30_000) throw new Error(`event reached ${received.get(uuid) ?? 0} of ${TOTAL_SUBSCRIBERS} subscribers`);
      await sleep(5);
    }
    const elapsed = Date.now() - started;
    delivery.push(arrivals.get(uuid)! - started);
    cpuAt().forEach((ms, r) => (fanOut[r]! += ms - before[r]! - (idleCpu[r]! * elapsed) / 1000));
  }
  await Promise.all(clients.map((client) => client.dispose()));
  await Promise.all(gateways.map((g) => g.stop()));
  delivery.sort((a, b) => a - b);
  return {
    replicas,
    shared: redisUrl !== undefined,
    upstreamCallsPerSecond: ((countersAfter.audit - countersBefore.audit) * 1000) / IDLE_MS,
    idleCpuMsPerSecond: idleCpu,
    fanOutCpuMsPerEvent: fanOut.map((ms) => ms / EVENTS),
    deliveryMs: { p50: delivery[Math.floor(delivery.length / 2)]!, max: delivery.at(-1)! },
  };
}

const format = (s: Setup) =>
  `${s.replicas} replica(s) x ${TOTAL_SUBSCRIBERS / s.replicas} subscribers${s.shared ? ', one Redis' : ''}: upstream ${s.upstreamCallsPerSecond.toFixed(1)} calls/s; ` +
  `CPU at rest ${s.idleCpuMsPerSecond.map((v) => v.toFixed(1)).join(' / ')} ms/s; ` +
  `per event ${s.fanOutCpuMsPerEvent.map((v) => v.toFixed(1)).join(' / ')} ms; last subscriber p50 ${s.deliveryMs.p50} ms, max ${s.deliveryMs.max} ms`;

await buildGateway();
const simulator = await startSimulatorProcess(1);
const redis = await startRedis();
try {
  console.log(format(await measure(1, simulator.url, undefined)));
  console.log(format(await measure(3, simulator.url, redis.url)));
  console.log(format(await measure(3, simulator.url, undefined)));
} finally {
  redis.child.kill('SIGKILL');
  await simulator.stop();
}
process.exit(0);
