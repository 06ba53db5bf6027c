/** The HTTP server and the bounds on what callers hold open: receive timeouts (408), a connection cap, a memory budget. */
import { createServer, ServerResponse, type IncomingMessage, type RequestListener } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { Counter, Gauge, type LabelValues, type Registry } from 'prom-client';
import { createMemoryBudget, type ByteHolding, type ByteReservations } from '../lib/byte-reservations.js';
import type { Config } from '../lib/config.js';
import { answerAndClose, answerClientError, answerJson, errorBody, rawAnswer, requestUrlProblem } from './client-error.js';
import type { Logger } from '../lib/logger.js';
import { ClientFrames } from './compat/websocket-frames.js';

export type ConnectionLimits = Config['connections'] & { readonly maxRequestBytes: number };

/** Headers arrive in one or two packets from any real client; a slow sender is a slowloris. */
const HEADERS_TIMEOUT_MS = 10_000;
/** Refusals being written (or lingering for the client to read them) at once, beyond the cap. */
const REFUSALS_AT_ONCE = 256;
const RETRY_AFTER = { 'retry-after': '1' };
const WARNING_INTERVAL_MS = 60_000;
const busyBody = (message: string) => errorBody(message, 'RATE_LIMITED');
const CONNECTIONS_BUSY = rawAnswer(503, busyBody('The gateway has too many open connections; retry later.'), RETRY_AFTER);
const BODIES_BUSY = busyBody('The gateway holds too many requests at once; retry later.');

/** Counts each event; one warning for a burst: the first at once, the ones after it at most once per interval, as a count. */
function countedWarning(counter: Counter, write: (count: number) => void): (labels?: LabelValues<string>) => void {
  let pending = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (pending === 0) return;
    write(pending);
    pending = 0;
    timer = setTimeout(flush, WARNING_INTERVAL_MS).unref();
  };
  return (labels = {}) => {
    counter.inc(labels);
    pending += 1;
    if (!timer) flush();
  };
}

/** An answer whose bytes queued for a client that does not read count in its request's share of the memory budget. */
class CountedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Read by the gateway's plugins: a parsed request counts in its body's share. */
  holding: ByteHolding | undefined;

  holdIn(holding: ByteHolding): void {
    this.holding = holding;
    // The last bytes drain before 'finish'; 'close' gives the whole holding back.
    this.on('drain', this.recountQueuedBytes).on('finish', this.recountQueuedBytes).on('close', this.releaseHolding);
  }

  recountQueuedBytes(): void {
    this.holding?.queued(this.writableLength);
  }

  releaseHolding(): void {
    this.holding?.release();
  }
}

for (const name of ['write', 'end'] as const) {
  const original = ServerResponse.prototype[name] as (...args: unknown[]) => unknown;
  Reflect.set(CountedResponse.prototype, name, function counted(this: CountedResponse, ...args: unknown[]) {
    const result = original.apply(this, args);
    this.recountQueuedBytes();
    return result;
  });
}

/** What a body reserves: its announced length (over the limit, refused 413 unread: the limit); a chunked one, the largest allowed. */
function bodyBytes(request: IncomingMessage, largest: number): number {
  if (request.headers['transfer-encoding'] !== undefined) return largest;
  return Math.min(Number(request.headers['content-length']) || 0, largest);
}

export function createGatewayServer(
  handler: RequestListener,
  limits: ConnectionLimits,
  log: Logger,
  reservations: ByteReservations = createMemoryBudget(limits.maxRequestBytesInFlight),
) {
  const headersTimeout = Math.min(HEADERS_TIMEOUT_MS, limits.requestTimeoutMs);
  const server = createServer({
    ServerResponse: CountedResponse,
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout,
    // Node looks for overdue requests every 30 s by default, which would stretch the timeouts.
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4))),
    // Refused below with a JSON error (Node's own answer is empty).
    requireHostHeader: false,
  });
  server.maxConnections = limits.maxConnections + REFUSALS_AT_ONCE;

  const openConnections = new Gauge({ name: 'gateway_http_connections', help: 'Open client connections (HTTP, SSE and WebSocket).', registers: [] });
  const refusedConnections = new Counter({
    name: 'gateway_http_connections_refused_total',
    help: 'Connections refused over MAX_CONNECTIONS: answered 503 (limit), or closed unanswered while too many refusals were in progress (flood).',
    labelNames: ['reason'],
    registers: [],
  });
  const refusedRequests = new Counter({
    name: 'gateway_http_requests_refused_total',
    help: 'Requests answered 503, and WebSocket connections closed 1013, because their body or message would take the memory budget past MAX_REQUEST_BYTES_IN_FLIGHT.',
    labelNames: ['reason'],
    registers: [],
  });
  const timeouts = new Counter({
    name: 'gateway_http_request_timeouts_total',
    help: 'Requests whose headers or body did not arrive in time (answered 408), and WebSocket messages (connection closed 1008).',
    registers: [],
  });
  const bytesInFlight = new Gauge({
    name: 'gateway_http_request_bytes_in_flight',
    help: 'Bytes of the memory budget held: requests from arrival to answer, WebSocket messages and operations, answers queued for clients.',
    registers: [],
    collect() {
      this.set(reservations.bytes);
    },
  });
  for (const reason of ['limit', 'flood']) refusedConnections.inc({ reason }, 0);
  refusedRequests.inc({ reason: 'bytes_in_flight' }, 0);

  const refusedConnection = countedWarning(refusedConnections, (refused) =>
    log.warn({ refused, maxConnections: limits.maxConnections }, 'connection limit reached: new connections are answered 503'),
  );
  const refusedBytes = countedWarning(refusedRequests, (refused) =>
    log.warn(
      { refused, maxRequestBytesInFlight: limits.maxRequestBytesInFlight },
      'memory budget at its limit: requests with a body are answered 503, WebSockets sending a message are closed',
    ),
  );
  const timedOut = countedWarning(timeouts, (timedOut) =>
    log.info(
      { timedOut, headersTimeoutMs: headersTimeout, requestTimeoutMs: limits.requestTimeoutMs },
      'requests or WebSocket messages did not arrive in time: answered 408 or closed',
    ),
  );

  // Every admitted connection goes to Node's HTTP connection handling; a refused one never does.
  let open = 0;
  const httpConnection = server.listeners('connection');
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    if (open >= limits.maxConnections) {
      refusedConnection({ reason: 'limit' });
      answerAndClose(socket, CONNECTIONS_BUSY);
      return;
    }
    open += 1;
    openConnections.inc();
    socket.once('close', () => {
      open -= 1;
      openConnections.dec();
    });
    for (const listener of httpConnection) listener.call(server, socket);
  });
  server.on('drop', () => refusedConnection({ reason: 'flood' }));

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const urlProblem = requestUrlProblem(request);
    if (urlProblem) {
      // A caller's mistake, logged as one: Yoga, which writes the access line, never sees it.
      log.info(
        { method: request.method?.slice(0, 16), status: 400, errors: ['BAD_REQUEST'], reason: urlProblem },
        'request refused: its URL cannot be read',
      );
      answerJson(response, 400, errorBody(urlProblem, 'BAD_REQUEST'));
      return;
    }
    // The request's share of the budget, held until its answer has left or the connection is gone.
    const holding = reservations.holding();
    if (!holding.add(request.complete ? 0 : bodyBytes(request, limits.maxRequestBytes))) {
      refusedBytes({ reason: 'bytes_in_flight' });
      answerJson(response, 503, BODIES_BUSY, RETRY_AFTER);
      return;
    }
    (response as CountedResponse).holdIn(holding);
    handler(request, response);
  });

  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') timedOut();
    answerClientError(error, socket);
  });

  const watchWebSocket = (webSocket: WebSocket, { socket }: IncomingMessage): void => {
    const message = reservations.holding();
    let overdue: NodeJS.Timeout | undefined;
    let closing = false;
    const messageOver = () => {
      message.resize(0);
      clearTimeout(overdue);
      overdue = undefined;
    };
    const close = (code: number, reason: string) => {
      closing = true;
      messageOver();
      // The client's answer to the close frame is not handed to ws: ws's closeTimeout ends the socket.
      webSocket.close(code, reason);
    };
    const frames = new ClientFrames({
      started(announced) {
        // Refused as ws's maxPayload would, but before ws reads it, with a reason and no socket error.
        if (announced !== undefined && announced > limits.maxRequestBytes) {
          return close(1009, `A message may be at most ${limits.maxRequestBytes} bytes long.`);
        }
        if (message.resize(Math.min(announced ?? limits.maxRequestBytes, limits.maxRequestBytes))) return;
        refusedBytes({ reason: 'bytes_in_flight' });
        close(1013, 'The gateway is receiving too many messages at once; retry later.');
      },
      ended: messageOver,
    });
    // ws is handed each read once it is known not to begin a refused message: ws never buffers one.
    const wsReaders = socket.listeners('data') as ((this: Socket, chunk: Buffer) => void)[];
    socket.removeAllListeners('data');
    socket.on('data', (chunk: Buffer) => {
      if (closing) return;
      frames.push(chunk);
      if (closing) return;
      for (const read of wsReaders) read.call(socket, chunk);
      if (!frames.receiving || overdue) return;
      overdue = setTimeout(() => {
        timedOut();
        close(1008, 'The message did not arrive in time.');
      }, limits.requestTimeoutMs).unref();
    });
    socket.once('close', messageOver);
  };

  return {
    server,
    watchWebSocket,
    memoryBudget: reservations,
    registerMetrics(registry: Registry) {
      for (const metric of [openConnections, refusedConnections, refusedRequests, timeouts, bytesInFlight]) registry.registerMetric(metric);
    },
  };
}
