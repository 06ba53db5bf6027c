/**
 * What a caller can hold open: connections over MAX_CONNECTIONS are answered 503 `RATE_LIMITED`,
 * a request whose headers or body stall is answered 408 after the request timeout, request bodies
 * and WebSocket messages being received are bounded in bytes across connections (a WebSocket
 * message that stalls is closed after the request timeout), and none of this cuts an SSE or
 * WebSocket subscription, whose request was received long before. The entry point's wiring:
 * test/hardening/connection-limits-process.test.ts.
 */
import { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/lib/config.js';
import { createGatewayServer, type ConnectionLimits } from '../../src/server/http-server.js';
import { SMALL_BODY_BYTES } from '../../src/lib/byte-reservations.js';
import { createLiveAudit } from '../../src/audit/live/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { createMetrics } from '../../src/gateway/plugins/observability/metrics.js';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { createUpstreams } from '../../src/upstream/index.js';
import type { Upstreams } from '../../src/upstream/types.js';
import { attachWebSockets, type WebSockets } from '../../src/server/websocket/index.js';
import { createGateway } from '../../src/gateway/yoga.js';
import { MemoryLog } from '../helpers/memory-log.js';
import { keepAliveGet, metricValue, parse, postHead, query, rawClients, type RawClient } from '../helpers/raw-http.js';
import { simulatorEnv } from '../helpers/simulator-env.js';
import { API_KEY, sleep, subscribeSse, subscribeWs } from '../live/live-server.js';
import { closeServer } from '../helpers/listen.js';
import { clientFrame, RawWebSocket } from '../helpers/websocket-frame.js';

const REQUEST_TIMEOUT_MS = 300;
/** Where nothing may time out while a test runs, on however busy a machine; tests skip ahead over it. */
const LONG_TIMEOUT_MS = 30_000;
/** How long an answered connection the client keeps open lingers (src/server/client-error.ts). */
const LINGER_MS = 1000;
/** How long a WebSocket closed by the server stays open for its client to read the close frame (src/server/http-server.ts). */
const CLOSE_GRACE_MS = 1000;
const open = rawClients();

interface Served {
  readonly port: number;
  readonly url: string;
  readonly server: Server;
  readonly memory: MemoryLog;
  scrape(): Promise<string>;
  close(): Promise<void>;
}

let sim: Simulator;
beforeAll(async () => {
  // A new audit event every 100 ms, for the live subscriptions.
  sim = await startSimulator({ eventCount: 50, newEventIntervalMs: 100 });
});
afterAll(async () => {
  await sim.close();
});
// Also after a test that timed out inside a fake: the files after this one share its worker.
afterEach(() => {
  vi.useRealTimers();
});

/** The gateway on a server of createGatewayServer, HTTP, SSE and WebSocket, as src/main.ts wires it. */
async function serve(limits: Partial<ConnectionLimits>): Promise<Served> {
  const config = loadConfig({ ...simulatorEnv(sim), GATEWAY_API_KEYS: API_KEY, AUDIT_LIVE_POLL_MS: '50', LOG_LEVEL: 'info' });
  const memory = new MemoryLog();
  const log = createLogger({ level: config.logLevel, destination: memory });
  const metrics = createMetrics();
  const upstreams: Upstreams = createUpstreams(config);
  const liveAudit = createLiveAudit(config, upstreams, log);
  const yoga = createGateway({ config, upstreams, log, metrics, liveAudit });
  const { server, registerMetrics, watchWebSocket } = createGatewayServer(
    (request, response) => void yoga(request, response),
    { maxConnections: 100, requestTimeoutMs: REQUEST_TIMEOUT_MS, maxRequestBytesInFlight: 1024 * 1024, maxRequestBytes: 256 * 1024, ...limits },
    log,
  );
  registerMetrics(metrics.registry);
  const webSockets: WebSockets = attachWebSockets(server, {
    yoga,
    liveAudit,
    log,
    maxPayloadBytes: config.maxRequestBytes,
    watchSocket: watchWebSocket,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/graphql`,
    server,
    memory,
    scrape: () => metrics.registry.metrics(),
    async close() {
      await webSockets.close();
      await closeServer(server);
      await upstreams.close();
    },
  };
}

/** The server's connections (refused ones still lingering included) once they are `expected`, or after twenty seconds, as they are. */
async function untilServerConnections(served: Served, expected: number, pause = () => sleep(20)): Promise<number> {
  const deadline = Date.now() + 20_000;
  const count = () => new Promise<number>((resolve) => served.server.getConnections((_error, n) => resolve(n)));
  let open = await count();
  while (open !== expected && Date.now() < deadline) {
    await pause();
    open = await count();
  }
  return open;
}

/** A pause that needs no timer, for while timers are held still. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Once the server has ended every one of these connections, or twenty seconds are over. */
async function untilEnded(clients: readonly RawClient[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!clients.every((client) => client.ended || client.closed) && Date.now() < deadline) await nextTurn();
}

async function untilConnections(served: Served, expected: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (metricValue(await served.scrape(), 'gateway_http_connections') !== expected && Date.now() < deadline) await sleep(20);
}

/**
 * Runs `body` with setTimeout keeping real pace, so that it can skip ahead (vi.advanceTimersByTime)
 * over the second an answered connection lingers, or over a request timeout.
 */
async function skippingAhead(body: () => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
  try {
    await body();
  } finally {
    vi.useRealTimers();
  }
}

/** A request body of exactly `bytes` bytes: a query padded with spaces. */
function typenameBody(bytes: number): string {
  const body = (padding: number) => JSON.stringify({ query: `{ __typename${' '.repeat(padding)}}` });
  return body(bytes - body(0).length);
}

/** Waits until the body bytes reserved are `expected` (or twenty seconds are over). */
async function untilReserved(served: Served, expected: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (metricValue(await served.scrape(), 'gateway_http_request_bytes_in_flight') !== expected && Date.now() < deadline) await sleep(20);
}


describe('requests that do not arrive in time', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve({});
  });
  afterAll(() => served.close());

  it('answers a body that stalls halfway with 408 and a JSON BAD_REQUEST error, and closes the connection', async () => {
    await skippingAhead(async () => {
      const client = open(served.port, postHead(query.length + 100) + query);
      const answer = parse(await client.answer());
      expect(answer.statusLine).toBe('HTTP/1.1 408 Request Timeout');
      expect(answer.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', connection: 'close' });
      expect(answer.body).toEqual({ errors: [{ message: 'The request did not arrive in time.', extensions: { code: 'BAD_REQUEST' } }] });
      // The client never closes its side: the server lets go of the connection by itself.
      vi.advanceTimersByTime(LINGER_MS);
      expect(await untilServerConnections(served, 0)).toBe(0);
      expect(client.closed).toBe(false);
    });
  });

  it('answers headers sent a line at a time (slowloris) with 408 and closes the connection', async () => {
    const client = open(served.port, 'POST /graphql HTTP/1.1\r\nhost: x\r\n');
    const trickle = setInterval(() => client.socket.write('x-more: y\r\n'), 50);
    try {
      await skippingAhead(async () => {
        expect(parse(await client.answer()).statusLine).toBe('HTTP/1.1 408 Request Timeout');
        vi.advanceTimersByTime(LINGER_MS);
        expect(await untilServerConnections(served, 0)).toBe(0);
      });
    } finally {
      clearInterval(trickle);
    }
  });

  it('frees the bytes of a body that timed out', async () => {
    await skippingAhead(async () => {
      const client = open(served.port, postHead(40 * 1024) + '{');
      expect(parse(await client.answer()).statusLine).toBe('HTTP/1.1 408 Request Timeout');
      vi.advanceTimersByTime(LINGER_MS);
      await untilReserved(served, 0);
      expect(metricValue(await served.scrape(), 'gateway_http_request_bytes_in_flight')).toBe(0);
    });
  });

  it('counts the requests that timed out in the metrics', async () => {
    const before = metricValue(await served.scrape(), 'gateway_http_request_timeouts_total');
    await open(served.port, postHead(10) + '{').answer();
    expect(metricValue(await served.scrape(), 'gateway_http_request_timeouts_total')).toBe(before + 1);
  });

  it('keeps an SSE subscription and a WebSocket open well past the request timeout, still delivering', async () => {
    const sse = subscribeSse(served.url);
    const ws = subscribeWs(served.url);
    // Timeouts (and checks of Node's connection list) go by.
    await sleep(REQUEST_TIMEOUT_MS * 2);
    expect(sse.received.done).toBe(false);
    expect(ws.received.done).toBe(false);
    const before = [sse.received.uuids.length, ws.received.uuids.length];
    await sse.received.until((r) => r.uuids.length > before[0]!);
    await ws.received.until((r) => r.uuids.length > before[1]!);
    expect(sse.received.errors).toEqual([]);
    expect(ws.received.errors).toEqual([]);
    await sse.stop();
    await ws.stop();
    await ws.client.dispose();
  });
});

describe('connections over MAX_CONNECTIONS', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve({ maxConnections: 3 });
  });
  afterAll(() => served.close());
  // Each test starts with no connection: those of the test before are gone.
  beforeEach(() => untilServerConnections(served, 0));

  it('answers a connection over the cap 503 RATE_LIMITED and closes it, while those under it are served', async () => {
    const held = [open(served.port, keepAliveGet('/healthz')), open(served.port, keepAliveGet('/healthz')), open(served.port, keepAliveGet('/healthz'))];
    for (const client of held) expect(parse(await client.answer()).statusLine).toBe('HTTP/1.1 200 OK');

    await skippingAhead(async () => {
      const refused = open(served.port, keepAliveGet('/healthz'));
      const answer = parse(await refused.answer());
      expect(answer.statusLine).toBe('HTTP/1.1 503 Service Unavailable');
      expect(answer.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', connection: 'close', 'retry-after': '1' });
      expect(answer.body).toEqual({
        errors: [{ message: 'The gateway has too many open connections; retry later.', extensions: { code: 'RATE_LIMITED' } }],
      });
      // The client never closes its side: the server lets go of the refused connection by itself.
      vi.advanceTimersByTime(LINGER_MS);
      expect(await untilServerConnections(served, 3)).toBe(3);
    });

    // The held connections are still served on the same sockets.
    held[0]!.received = '';
    held[0]!.socket.write(postHead(query.length) + query);
    expect(parse(await held[0]!.answer()).body).toEqual({ data: { __typename: 'Query' } });

    // Once one of them closes, a new connection is served.
    held[1]!.socket.destroy();
    await untilConnections(served, 2);
    const next = open(served.port, `GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
    expect(parse(await next.answer()).statusLine).toBe('HTTP/1.1 200 OK');
  });

  it('refuses a WebSocket over the cap with the same 503, before its handshake', async () => {
    for (let i = 0; i < 3; i++) expect(parse(await open(served.port, keepAliveGet('/healthz')).answer()).statusLine).toBe('HTTP/1.1 200 OK');
    const socket = new WebSocket(served.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    socket.on('error', () => {});
    const [status, body] = await new Promise<[number | undefined, string]>((resolve) => {
      socket.once('unexpected-response', (_request, response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve([response.statusCode, text]));
      });
      socket.once('open', () => resolve([101, '']));
    });
    socket.terminate();
    expect(status).toBe(503);
    expect(JSON.parse(body)).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
  });

  it('counts every refusal in the metrics but logs a flood of them once', async () => {
    const refusedBefore = metricValue(await served.scrape(), 'gateway_http_connections_refused_total{reason="limit"}');
    const warningsBefore = served.memory.lines().filter((line) => line.msg?.startsWith('connection limit reached')).length;
    for (let i = 0; i < 3; i++) expect(parse(await open(served.port, keepAliveGet('/healthz')).answer()).statusLine).toBe('HTTP/1.1 200 OK');
    for (let i = 0; i < 20; i++) expect(parse(await open(served.port, keepAliveGet('/healthz')).answer()).statusLine).toMatch(/ 503 /);

    const scrape = await served.scrape();
    expect(metricValue(scrape, 'gateway_http_connections_refused_total{reason="limit"}')).toBe(refusedBefore + 20);
    expect(metricValue(scrape, 'gateway_http_connections')).toBe(3);
    const warnings = served.memory.lines().filter((line) => line.msg?.startsWith('connection limit reached'));
    // The earlier tests' refusals were logged; these twenty wait for the next line, a minute on.
    expect(warnings.length).toBe(warningsBefore);
    expect(warnings[0]).toMatchObject({ level: 40, refused: 1, maxConnections: 3 });
  });

  it('closes connections unanswered while 256 refusals are still being written, counts them as a flood, and answers 503 again once those are gone', async () => {
    const floodBefore = metricValue(await served.scrape(), 'gateway_http_connections_refused_total{reason="flood"}');
    const held = Array.from({ length: 3 }, () => open(served.port, keepAliveGet('/healthz')));
    for (const client of held) expect(parse(await client.answer()).statusLine).toBe('HTTP/1.1 200 OK');

    // Clients that never close their side: each refusal lingers a second for its client to read it.
    // That second is held still while they connect (accepting 256 connections can take longer on a
    // busy machine), and let run once the flood is counted.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const refused = Array.from({ length: 256 }, () => open(served.port));
      await untilEnded(refused);
      for (const client of refused) expect(parse(client.received).statusLine).toBe('HTTP/1.1 503 Service Unavailable');
      expect(await untilServerConnections(served, 3 + 256, nextTurn)).toBe(3 + 256);

      // Sending nothing, so that the server's close reaches them as an end, not as a reset of unread bytes.
      const flood = Array.from({ length: 5 }, () => open(served.port));
      await untilEnded(flood);
      for (const client of flood) expect({ received: client.received, ended: client.ended }).toEqual({ received: '', ended: true });
      expect(metricValue(await served.scrape(), 'gateway_http_connections_refused_total{reason="flood"}')).toBe(floodBefore + 5);
      vi.advanceTimersByTime(1000);
    } finally {
      vi.useRealTimers();
    }

    // The held connections are still served, and once the refusals are gone a new connection is answered again.
    held[0]!.received = '';
    held[0]!.socket.write(keepAliveGet('/healthz'));
    expect(parse(await held[0]!.answer()).statusLine).toBe('HTTP/1.1 200 OK');
    expect(await untilServerConnections(served, 3)).toBe(3);
    expect(parse(await open(served.port).answer()).statusLine).toBe('HTTP/1.1 503 Service Unavailable');
  });
});

describe('request bytes in flight', () => {
  let served: Served;
  beforeAll(async () => {
    // Room for 80 KB of (not small) bodies being received at once.
    served = await serve({ maxRequestBytesInFlight: 80 * 1024, requestTimeoutMs: LONG_TIMEOUT_MS });
  });
  afterAll(() => served.close());

  it('answers a body that would take the bytes being received past the bound 503 RATE_LIMITED; smaller ones and GETs pass', async () => {
    const bodies = [typenameBody(40 * 1024), typenameBody(20 * 1024)];
    const stalled = bodies.map((body) => open(served.port, postHead(body.length) + body[0]));
    await untilReserved(served, 60 * 1024);

    const refused = open(served.port, postHead(24 * 1024) + '{');
    const answer = parse(await refused.answer());
    expect(answer.statusLine).toBe('HTTP/1.1 503 Service Unavailable');
    expect(answer.headers).toMatchObject({ connection: 'close', 'retry-after': '1' });
    expect(answer.body).toEqual({
      errors: [{ message: 'The gateway holds too many requests at once; retry later.', extensions: { code: 'RATE_LIMITED' } }],
    });

    // A body that fits in what is left, an ordinary small one (not counted), and a request without a body, are served.
    const fits = JSON.stringify({ query: `{ __typename ${' '.repeat(17 * 1024)}}` });
    expect(parse(await open(served.port, postHead(fits.length) + fits).answer()).body).toEqual({ data: { __typename: 'Query' } });
    const small = JSON.stringify({ query: `{ __typename ${' '.repeat(SMALL_BODY_BYTES - 100)}}` });
    expect(parse(await open(served.port, postHead(small.length) + small).answer()).body).toEqual({ data: { __typename: 'Query' } });
    expect(parse(await open(served.port, postHead(query.length) + query).answer()).body).toEqual({ data: { __typename: 'Query' } });
    expect(parse(await open(served.port, keepAliveGet('/healthz')).answer()).statusLine).toBe('HTTP/1.1 200 OK');

    // Once the stalled bodies are whole, they are served and their bytes are free again.
    stalled.forEach((client, i) => client.socket.write(bodies[i]!.slice(1)));
    for (const client of stalled) expect(parse(await client.answer()).body).toEqual({ data: { __typename: 'Query' } });
    await untilReserved(served, 0);
    const late = JSON.stringify({ query: `{ __typename ${' '.repeat(60 * 1024)}}` });
    expect(parse(await open(served.port, postHead(late.length) + late).answer()).body).toEqual({ data: { __typename: 'Query' } });

    expect(metricValue(await served.scrape(), 'gateway_http_requests_refused_total{reason="bytes_in_flight"}')).toBe(1);
  });
});

const ANONYMOUS_QUERIES = 'graphql_envelop_request_total{operation_type="query",operation_name="anonymous"}';

describe('WebSocket messages being received', () => {
  let served: Served;
  const sockets: RawWebSocket[] = [];
  beforeAll(async () => {
    // Room for 80 KB of (not small) bodies and messages being received at once.
    served = await serve({ maxRequestBytesInFlight: 80 * 1024, requestTimeoutMs: LONG_TIMEOUT_MS });
  });
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.socket.destroy();
  });
  afterAll(() => served.close());

  const acknowledged = async () => {
    const socket = await RawWebSocket.open(served.port, { 'x-api-key': API_KEY });
    sockets.push(socket);
    return socket;
  };
  /** A subscribe message of `bytes` bytes (its query padded with spaces), as one frame. */
  const typenameOf = (id: string, bytes: number) => {
    const message = (padding: number) => JSON.stringify({ id, type: 'subscribe', payload: { query: `{ __typename${' '.repeat(padding)}}` } });
    return clientFrame(message(bytes - message(0).length));
  };
  const answered = (socket: RawWebSocket, id: string) =>
    socket.until(() => socket.messages.some((m) => JSON.stringify(m) === JSON.stringify({ id, type: 'next', payload: { data: { __typename: 'Query' } } })));

  it('closes a WebSocket whose message would take the bytes being received past the bound with 1013; small messages, other sockets and finished messages are served', async () => {
    const [first, second, third, other] = await Promise.all([acknowledged(), acknowledged(), acknowledged(), acknowledged()]);
    const big = typenameOf('big', 40 * 1024);
    first.send(big.subarray(0, big.length - 1));
    const medium = typenameOf('medium', 20 * 1024);
    second.send(medium.subarray(0, 1000));
    await untilReserved(served, 60 * 1024);

    const executed = async () => metricValue(await served.scrape(), ANONYMOUS_QUERIES);
    const executedBefore = await executed();
    third.send(typenameOf('refused', 24 * 1024));
    await third.until(() => third.closeFrame !== undefined);
    expect(third.closeFrame).toEqual({ code: 1013, reason: 'The gateway is receiving too many messages at once; retry later.' });
    // The budget is the one request bodies take too.
    expect(parse(await open(served.port, postHead(24 * 1024) + '{').answer()).statusLine).toBe('HTTP/1.1 503 Service Unavailable');

    // A small message (not counted) is served on another socket and on those receiving a large one.
    other.sendMessage({ id: 'small', type: 'subscribe', payload: { query: '{ __typename }' } });
    await answered(other, 'small');
    // A large message, once whole, is served and frees its bytes.
    first.send(big.subarray(big.length - 1));
    await answered(first, 'big');
    await untilReserved(served, 20 * 1024);
    second.send(medium.subarray(1000));
    await answered(second, 'medium');
    await untilReserved(served, 0);
    expect(first.closed || second.closed || other.closed).toBe(false);
    expect(metricValue(await served.scrape(), 'gateway_http_requests_refused_total{reason="bytes_in_flight"}')).toBe(2);

    // The refused message was never run, and its socket is gone.
    await third.until(() => third.closed);
    expect(third.messages.map((m) => (m as { type: string }).type)).toEqual(['connection_ack']);
    expect(await executed()).toBe(executedBefore + 3);
  });

  it('closes a WebSocket whose message announces more than MAX_REQUEST_BYTES with 1009 before reading it, and writes nothing to stderr', async () => {
    const stderr = vi.spyOn(console, 'error');
    try {
      const [socket, other] = await Promise.all([acknowledged(), acknowledged()]);
      socket.send(clientFrame('{"id":"huge",', { announced: 256 * 1024 + 1 }));
      await socket.until(() => socket.closeFrame !== undefined);
      expect(socket.closeFrame).toEqual({ code: 1009, reason: 'A message may be at most 262144 bytes long.' });
      await untilReserved(served, 0);
      // Other sockets, and their large messages, are served as before.
      other.send(typenameOf('large', 40 * 1024));
      await answered(other, 'large');
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
    }
  });

  it('closes a WebSocket whose message is not whole within the request timeout with 1008, small or large, and frees its bytes', async () => {
    const timedOutBefore = metricValue(await served.scrape(), 'gateway_http_request_timeouts_total');
    const [large, small, prompt] = await Promise.all([acknowledged(), acknowledged(), acknowledged()]);
    await skippingAhead(async () => {
      large.send(typenameOf('large', 30 * 1024).subarray(0, 20 * 1024));
      small.send(typenameOf('small', 100).subarray(0, 50));
      await untilReserved(served, 30 * 1024);

      // Sent in pieces, within the timeout: served.
      const pieces = typenameOf('prompt', 30 * 1024);
      prompt.send(pieces.subarray(0, 10));
      await untilReserved(served, 60 * 1024);
      vi.advanceTimersByTime(LONG_TIMEOUT_MS / 2);
      prompt.send(pieces.subarray(10));
      await answered(prompt, 'prompt');
      expect([large.closeFrame, small.closeFrame]).toEqual([undefined, undefined]);

      vi.advanceTimersByTime(LONG_TIMEOUT_MS);
      for (const stalled of [large, small]) {
        await stalled.until(() => stalled.closeFrame !== undefined);
        expect(stalled.closeFrame).toEqual({ code: 1008, reason: 'The message did not arrive in time.' });
      }
      // The socket goes once the client could read the close frame.
      vi.advanceTimersByTime(CLOSE_GRACE_MS);
      for (const stalled of [large, small]) await stalled.until(() => stalled.closed);
    });
    await untilReserved(served, 0);
    expect(prompt.closed).toBe(false);
    expect(metricValue(await served.scrape(), 'gateway_http_request_timeouts_total')).toBe(timedOutBefore + 2);
  });
});
