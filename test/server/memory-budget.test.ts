/**
 * One memory budget for what callers make the process hold (src/lib/byte-reservations.ts, shared by
 * src/server/http-server.ts and src/gateway/plugins/limits/held-requests.ts), here a small one: requests waiting
 * for a slow upstream hold their share until they end, however they end; live subscriptions hold
 * theirs while open, over SSE and WebSocket, and only what they run on, not their raw request.
 * Past the budget a new request is refused at once with RATE_LIMITED. The attacks at full size,
 * under the production heap: test/soak/memory-budget-heap.test.ts.
 */
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ByteReservations } from '../../src/lib/byte-reservations.js';
import { loadConfig } from '../../src/lib/config.js';
import { createGatewayServer } from '../../src/server/http-server.js';
import { createMemoryBudget } from '../../src/lib/byte-reservations.js';
import { createLiveAudit, type LiveAudit } from '../../src/audit/live/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { SESSION_IDS } from '../../simulator/content-library-data.js';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { createUpstreams } from '../../src/upstream/index.js';
import type { Upstreams } from '../../src/upstream/types.js';
import { attachWebSockets, type WebSockets } from '../../src/server/websocket/index.js';
import { createGateway } from '../../src/gateway/yoga.js';
import { startHoldingProxy, type HoldingProxy } from '../helpers/holding-proxy.js';
import { closeServer } from '../helpers/listen.js';
import { MemoryLog } from '../helpers/memory-log.js';
import { parse, rawClients, type RawClient } from '../helpers/raw-http.js';
import { simulatorEnv } from '../helpers/simulator-env.js';
import { RawWebSocket } from '../helpers/websocket-frame.js';
import { API_KEY, sleep } from '../live/live-server.js';

const KB = 1024;
/** What the attacks send beside their operation: variables the operation does not use. */
const PADDING = 'x'.repeat(240 * KB);
const BUDGET = 2 * 1024 * KB;
const open = rawClients();

interface Served {
  readonly port: number;
  readonly budget: ByteReservations;
  readonly liveAudit: LiveAudit;
  close(): Promise<void>;
}

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ eventCount: 20 });
});
afterAll(() => sim.close());

/** The gateway on a server of createGatewayServer (HTTP, SSE and WebSocket), as src/main.ts wires it. */
async function serve(env: Record<string, string> = {}): Promise<Served> {
  const config = loadConfig({ ...simulatorEnv(sim), GATEWAY_API_KEYS: API_KEY, LOG_LEVEL: 'warn', ...env });
  const log = createLogger({ level: config.logLevel, destination: new MemoryLog() });
  const upstreams: Upstreams = createUpstreams(config, { retry: { maxRetries: 0 } });
  const liveAudit = createLiveAudit(config, upstreams, log);
  const budget = createMemoryBudget(BUDGET);
  const yoga = createGateway({ config, upstreams, log, liveAudit, memoryBudget: budget });
  const limits = { maxConnections: 200, requestTimeoutMs: 10_000, maxRequestBytesInFlight: BUDGET, maxRequestBytes: config.maxRequestBytes };
  const { server, watchWebSocket } = createGatewayServer((request, response) => void yoga(request, response), limits, log, budget);
  const webSockets: WebSockets = attachWebSockets(server, { yoga, liveAudit, log, maxPayloadBytes: config.maxRequestBytes, watchSocket: watchWebSocket });
  await new Promise<void>((resolve) => (server as Server).listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    budget,
    liveAudit,
    async close() {
      await webSockets.close();
      await closeServer(server);
      await upstreams.close();
    },
  };
}

const post = (body: string, accept = 'application/json') =>
  `POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: ${accept}\r\nx-api-key: ${API_KEY}\r\n` +
  `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;

/** The attack of a slow content library: a one-field query carrying 240 KB of variables it never reads. */
const fatFilesQuery = post(
  JSON.stringify({ query: `{ updateSessionFiles(updateSessionId: "${SESSION_IDS.ready}") { name } }`, variables: { padding: PADDING } }),
);

const LIVE = 'subscription Live($filter: AuditLiveFilter) { auditEventAdded(filter: $filter) { node { ... on AuditRecord { uuid } } } }';
const fatSubscription = post(JSON.stringify({ query: LIVE, variables: { filter: { objectType: 'Fat' }, padding: PADDING } }), 'text/event-stream');

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await sleep(10);
}

const statusOf = (client: RawClient) => client.received.slice(0, client.received.indexOf('\r\n'));

describe('requests waiting for a slow upstream', () => {
  let served: Served | undefined;
  let upstream: HoldingProxy | undefined;
  /** A gateway whose content library calls for files are held until the test lets them go. */
  async function serveHoldingFiles(env: Record<string, string> = {}): Promise<{ served: Served; upstream: HoldingProxy }> {
    upstream = await startHoldingProxy(sim.url, (request) => request.url!.includes('/updatesession/file'));
    served = await serve({ CONTENT_LIBRARY_URL: upstream.url, ...env });
    return { served, upstream };
  }
  afterEach(async () => {
    await served?.close();
    await upstream?.close();
    served = upstream = undefined;
  });

  it('hold their share until they are answered: past the budget a fat POST is refused at once, 503 RATE_LIMITED with retry-after', async () => {
    const { served, upstream } = await serveHoldingFiles();
    const clients = Array.from({ length: 12 }, () => open(served.port, fatFilesQuery));
    let refusedSoFar = 0;
    const pending = clients.map((client) => client.answer(20_000).then((answer) => (refusedSoFar++, answer)));
    // Every request is either refused or waiting on the upstream before any is answered.
    await until(() => refusedSoFar + upstream.heldCount() === 12, 20_000);
    upstream.release();
    const answers = (await Promise.all(pending)).map(parse);

    const refused = answers.filter((answer) => answer.statusLine === 'HTTP/1.1 503 Service Unavailable');
    const served200 = answers.filter((answer) => answer.statusLine === 'HTTP/1.1 200 OK');
    expect(refused.length + served200.length).toBe(12);
    // About 246 KB a request in 2 MB: eight wait at once, the others are refused.
    expect(served200.length).toBeGreaterThanOrEqual(1);
    expect(served200.length).toBeLessThanOrEqual(8);
    for (const answer of refused) {
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.body).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
    }
    for (const answer of served200) expect(answer.body).toMatchObject({ data: { updateSessionFiles: expect.any(Array) } });
    await until(() => served.budget.bytes === 0);
    expect(served.budget.bytes).toBe(0);
  });

  it('give their share back when their client goes away while they wait', async () => {
    const { served } = await serveHoldingFiles();
    const clients = Array.from({ length: 6 }, () => open(served.port, fatFilesQuery));
    await until(() => served.budget.bytes >= 6 * 240 * KB);
    expect(served.budget.bytes).toBeGreaterThanOrEqual(6 * 240 * KB);
    for (const client of clients) client.socket.destroy();
    await until(() => served.budget.bytes === 0);
    expect(served.budget.bytes).toBe(0);
  });

  it('give their share back when their upstream call times out', async () => {
    // The upstream never answers: each call ends with its deadline.
    const { served } = await serveHoldingFiles({ UPSTREAM_TIMEOUT_MS: '500' });
    const clients = Array.from({ length: 4 }, () => open(served.port, fatFilesQuery));
    const answers = (await Promise.all(clients.map((client) => client.answer(20_000)))).map(parse);
    for (const answer of answers) {
      expect(answer.body).toMatchObject({ errors: [{ extensions: { code: 'UPSTREAM_UNAVAILABLE' } }] });
    }
    await until(() => served.budget.bytes === 0);
    expect(served.budget.bytes).toBe(0);
  });
});

describe('answers queued for a client that does not read', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve();
  });
  afterAll(() => served.close());

  it('count in the budget until the client reads them or goes away; past the budget a new fat request is refused', async () => {
    // About 8 MB of answer: more than the budget and what the kernel's socket buffers take in for a
    // client that reads nothing (Linux lets a socket's send buffer grow to 4 MB by default).
    const files = '{ name sourceType upstreamSourceType size status checksumInfo { algorithm checksum } sourceEndpoint { uri scheme sslCertificateThumbprint } uploadEndpoint { uri } }';
    const query = `query ($r: [_Any!]!) { _entities(representations: $r) { ... on UpdateSession { a: files ${files} b: files ${files} } } }`;
    const representations = Array.from({ length: 80 }, () => ({ __typename: 'UpdateSession', id: SESSION_IDS.many }));
    const stalled = open(served.port, post(JSON.stringify({ query, variables: { r: representations } })));
    stalled.socket.pause();
    await until(() => served.budget.bytes > BUDGET);
    expect(served.budget.bytes).toBeGreaterThan(BUDGET);

    const refused = parse(await open(served.port, fatFilesQuery).answer());
    expect(refused.statusLine).toBe('HTTP/1.1 503 Service Unavailable');
    expect(refused.body).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });

    stalled.socket.destroy();
    await until(() => served.budget.bytes === 0);
    expect(served.budget.bytes).toBe(0);
  });
});

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
/** Heap and buffers in use after a full collection, in bytes. */
function memoryInUse(): number {
  collectGarbage();
  collectGarbage();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

describe('live subscriptions carrying 240 KB of variables they do not use', () => {
  let served: Served;
  const sockets: RawWebSocket[] = [];
  beforeAll(async () => {
    served = await serve({ AUDIT_LIVE_POLL_MS: '1000' });
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.socket.destroy();
    await until(() => served.liveAudit.stats().subscriptions === 0 && served.budget.bytes === 0);
  });
  afterAll(() => served.close());

  const SUBSCRIPTIONS = 30;
  /** A subscription's share once its unused variables are dropped: its parameters are small. */
  const SMALL_SHARE = 32 * KB;

  it('over SSE: each open one holds little of its request, and its share of the budget is given back when it ends', async () => {
    const before = memoryInUse();
    const streams: RawClient[] = [];
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const client = open(served.port, fatSubscription);
      await until(() => client.received.includes('\r\n\r\n') || client.closed);
      expect(statusOf(client)).toBe('HTTP/1.1 200 OK');
      streams.push(client);
    }
    expect(served.liveAudit.stats().subscriptions).toBe(SUBSCRIPTIONS);
    // Less than its unused variables alone (it used to hold its body and its variables, 1.5 MB).
    expect((memoryInUse() - before) / SUBSCRIPTIONS).toBeLessThan(PADDING.length);
    expect(served.budget.bytes).toBeLessThan(SMALL_SHARE);

    for (const stream of streams) stream.socket.destroy();
    await until(() => served.budget.bytes === 0 && served.liveAudit.stats().subscriptions === 0);
    expect(served.budget.bytes).toBe(0);
  });

  const fatSubscribe = (socket: RawWebSocket, id: string) =>
    socket.sendMessage({ id, type: 'subscribe', payload: { query: LIVE, variables: { filter: { objectType: 'Fat' }, padding: PADDING } } });

  it('over WebSocket: each open one holds its share (graphql-ws keeps its message), and past the budget a new one is refused', async () => {
    const socket = await RawWebSocket.open(served.port, { 'x-api-key': API_KEY });
    sockets.push(socket);
    const refusedOf = () => socket.closeFrame?.code === 1013 || socket.messages.some((m) => JSON.stringify(m).includes('RATE_LIMITED'));
    let opened = 0;
    for (let i = 0; i < SUBSCRIPTIONS && !refusedOf(); i++) {
      fatSubscribe(socket, `fat-${i}`);
      await until(() => served.liveAudit.stats().subscriptions > opened || refusedOf() || socket.closed);
      if (!refusedOf()) opened++;
    }
    expect(refusedOf()).toBe(true);
    for (const message of socket.messages.filter((m) => (m as { type: string }).type === 'error')) {
      expect(message).toMatchObject({ payload: [{ extensions: { code: 'RATE_LIMITED' } }] });
    }
    // Two copies of a 240 KB message each: a few fit in 2 MB.
    expect(opened).toBeGreaterThanOrEqual(2);
    expect(opened).toBeLessThanOrEqual(5);

    socket.socket.destroy();
    await until(() => served.budget.bytes === 0 && served.liveAudit.stats().subscriptions === 0);
    expect(served.budget.bytes).toBe(0);
  });

  it('over WebSocket: a burst past the budget is refused at once (RATE_LIMITED, or 1013 for a message that does not fit)', async () => {
    const connections = await Promise.all(Array.from({ length: 8 }, () => RawWebSocket.open(served.port, { 'x-api-key': API_KEY })));
    sockets.push(...connections);
    for (const [n, socket] of connections.entries()) for (let i = 0; i < 2; i++) fatSubscribe(socket, `burst-${n}-${i}`);
    const refusedOf = (socket: RawWebSocket) =>
      socket.closeFrame?.code === 1013 || socket.messages.some((m) => JSON.stringify(m).includes('RATE_LIMITED'));
    await until(() => connections.some(refusedOf) && served.liveAudit.stats().subscriptions > 0, 8000);
    expect(connections.some(refusedOf)).toBe(true);
    expect(served.liveAudit.stats().subscriptions).toBeGreaterThan(0);
    for (const socket of connections) {
      for (const message of socket.messages.filter((m) => (m as { type: string }).type === 'error')) {
        expect(message).toMatchObject({ payload: [{ extensions: { code: 'RATE_LIMITED' } }] });
      }
    }
  });
});
