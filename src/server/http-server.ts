/**
 * The HTTP server and the bounds on what its callers can hold open: connections, time to send a
 * request, and the request body and WebSocket message bytes being received across all connections.
 *
 * - Node's own timeouts: a request's headers must arrive within `headersTimeoutMs`, the whole
 *   request within `requestTimeoutMs` (408 and a JSON BAD_REQUEST, via src/server/client-error.ts). They
 *   cover receiving the request only: an SSE stream or a WebSocket, once its request is in, is not cut.
 *   A request without a Host header, with several, or with one that is not a host, is answered 400
 *   there too.
 * - Connections (HTTP, SSE and WebSocket alike) beyond `maxConnections` are answered 503 with
 *   `RATE_LIMITED` and closed before their request is read. While such refusals are being written,
 *   Node's `maxConnections` closes any further connection at once, so a flood cannot pile them up.
 * - Each request holds a share of the memory budget (`maxRequestBytesInFlight`) from its arrival
 *   until its answer has left the process, whichever way it ends (answered, failed, given up by
 *   its client, timed out): its announced body length (a chunked body: the largest allowed) from
 *   the start, what its parsed parameters take once read (src/gateway/plugins/limits/held-requests.ts), and the
 *   bytes of its answer queued for a client that does not read. One whose body would take the
 *   budget past its bound is answered 503 with `RATE_LIMITED` without reading the body.
 *   Holdings of up to SMALL_BODY_BYTES count nothing: ordinary operations are a few KB and must not
 *   wait behind large ones, and the connection cap bounds what they hold.
 * - A WebSocket message being received counts as a body does (src/main.ts hands the accepted
 *   sockets over): ws holds each message until it is whole. One over the budget closes its
 *   connection with 1013, one not whole within `requestTimeoutMs` with 1008.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ByteHolding, ByteReservations } from '../lib/byte-reservations.js';
import { answerAndClose, answerBadRequest, answerClientError, requestUrlProblem } from './client-error.js';
import type { Logger } from '../lib/logger.js';
import { createMemoryBudget, holdForRequest } from '../lib/memory-budget.js';
import { ClientFrames } from './websocket/frames.js';

export interface ConnectionLimits {
  /** Open client connections at once (HTTP keep-alive, SSE and WebSocket alike). */
  readonly maxConnections: number;
  /** Time to receive a whole request, headers and body. */
  readonly requestTimeoutMs: number;
  /** The memory budget: what requests, subscriptions and queued answers hold at once, across all connections. */
  readonly maxRequestBytesInFlight: number;
  /** The largest request body: what a body of unannounced length reserves. */
  readonly maxRequestBytes: number;
}

/** Headers arrive in one or two packets from any real client; a slow sender is a slowloris. */
const HEADERS_TIMEOUT_MS = 10_000;
/** Refusals being written (or lingering for the client to read them) at once, beyond the cap. */
const REFUSALS_AT_ONCE = 256;
/** A flood of refusals or timeouts is logged at most once in this long, with a count. */
const WARNING_INTERVAL_MS = 60_000;

const RETRY_AFTER_SECONDS = 1;

function busyBody(message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code: 'RATE_LIMITED' } }] });
}

/** WebSocket close codes (RFC 6455 §7.4.1, IANA registry) and reasons (at most 123 bytes). */
const TRY_AGAIN_LATER = 1013;
const POLICY_VIOLATION = 1008;
const MESSAGE_TOO_BIG = 1009;
const WEBSOCKET_BUSY_REASON = 'The gateway is receiving too many messages at once; retry later.';
const WEBSOCKET_LATE_REASON = 'The message did not arrive in time.';
/** How long a WebSocket closed for its message stays open, for the client to read the close frame. */
const CLOSE_GRACE_MS = 1000;
const CONNECTIONS_MESSAGE = 'The gateway has too many open connections; retry later.';
const BODIES_MESSAGE = 'The gateway holds too many requests at once; retry later.';

function rawBusyAnswer(message: string): string {
  const body = busyBody(message);
  return (
    'HTTP/1.1 503 Service Unavailable\r\n' +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `retry-after: ${RETRY_AFTER_SECONDS}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

/**
 * One warning for a burst of events: the first is logged at once, the ones after it at most once
 * per interval, as a count.
 */
export class RateLimitedWarning {
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastAt = -Infinity;
  constructor(
    private readonly write: (count: number) => void,
    private readonly intervalMs = WARNING_INTERVAL_MS,
  ) {}

  note(): void {
    this.pending += 1;
    if (this.timer) return;
    const wait = this.lastAt + this.intervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait).unref();
  }

  private flush(): void {
    this.timer = undefined;
    if (this.pending === 0) return;
    this.lastAt = Date.now();
    const count = this.pending;
    this.pending = 0;
    this.write(count);
  }
}

/** What a body reserves: its announced length; a chunked one, the largest allowed. */
function bodyBytes(request: IncomingMessage, largest: number): number {
  const announced = request.headers['content-length'];
  if (request.headers['transfer-encoding'] !== undefined) return largest;
  if (announced === undefined) return 0;
  // A length over the limit is refused (413) without reading a byte: it reserves only the limit.
  return Math.min(Number(announced) || 0, largest);
}

export interface GatewayServer {
  readonly server: Server;
  /**
   * Bounds what an accepted WebSocket's messages hold while ws buffers them: a message reserves
   * its bytes as a request body does (a fragmented one: the largest allowed) and must be whole
   * within the request timeout, or the connection is closed (1013, 1008).
   */
  watchWebSocket(socket: Socket, close: (code: number, reason: string) => void): void;
  /** Puts the connection metrics in the registry /metrics serves. */
  registerMetrics(registry: Registry): void;
  /** The budget requests hold their share of. */
  readonly memoryBudget: ByteReservations;
}

/**
 * Counts the answer's bytes that Node holds for a client that does not read (written, not yet
 * handed to the network) in the request's holding, as they are written and as they drain.
 */
function countQueued(response: ServerResponse, holding: ByteHolding): void {
  const recount = () => holding.queued(response.writableLength);
  const write = response.write;
  const end = response.end;
  response.write = function countedWrite(this: ServerResponse, ...args: Parameters<typeof write>) {
    const flushed = write.apply(this, args);
    recount();
    if (!flushed) this.once('drain', recount);
    return flushed;
  } as typeof write;
  response.end = function countedEnd(this: ServerResponse, ...args: Parameters<typeof end>) {
    const ended = end.apply(this, args);
    recount();
    // The last bytes drain before 'finish'; 'close' gives the whole holding back.
    this.once('finish', recount);
    return ended;
  } as typeof end;
}

export function createGatewayServer(
  handler: RequestListener,
  limits: ConnectionLimits,
  log: Logger,
  reservations: ByteReservations = createMemoryBudget(limits.maxRequestBytesInFlight),
): GatewayServer {
  const headersTimeout = Math.min(HEADERS_TIMEOUT_MS, limits.requestTimeoutMs);
  const server = createServer({
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout,
    // Node looks for overdue requests this often (30 s by default, which would stretch the timeouts).
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4))),
    // Refused below with a JSON error, as the parser's refusals are (Node's own answer is empty).
    requireHostHeader: false,
  });
  // Past the cap plus the refusals in progress, Node closes a new connection before reading it.
  server.maxConnections = limits.maxConnections + REFUSALS_AT_ONCE;

  const openConnections = new Gauge({
    name: 'gateway_http_connections',
    help: 'Open client connections (HTTP, SSE and WebSocket).',
    registers: [],
  });
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

  const connectionWarning = new RateLimitedWarning((refused) =>
    log.warn({ refused, maxConnections: limits.maxConnections }, 'connection limit reached: new connections are answered 503'),
  );
  const bodiesWarning = new RateLimitedWarning((refused) =>
    log.warn(
      { refused, maxRequestBytesInFlight: limits.maxRequestBytesInFlight },
      'memory budget at its limit: requests with a body are answered 503, WebSockets sending a message are closed',
    ),
  );
  const timeoutWarning = new RateLimitedWarning((timedOut) =>
    log.info(
      { timedOut, headersTimeoutMs: headersTimeout, requestTimeoutMs: limits.requestTimeoutMs },
      'requests or WebSocket messages did not arrive in time: answered 408 or closed',
    ),
  );

  let open = 0;
  // Every admitted connection goes to Node's HTTP connection handling; a refused one never does.
  const httpConnection = server.listeners('connection');
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    if (open >= limits.maxConnections) {
      refusedConnections.inc({ reason: 'limit' });
      connectionWarning.note();
      answerAndClose(socket, rawBusyAnswer(CONNECTIONS_MESSAGE));
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
  server.on('drop', () => {
    refusedConnections.inc({ reason: 'flood' });
    connectionWarning.note();
  });

  /**
   * Holds the request's share of the budget until its answer has left (or the connection is gone),
   * its body's bytes from the start; false: over the budget, nothing held.
   */
  const admit = (request: IncomingMessage, response: ServerResponse): boolean => {
    const holding = reservations.holding();
    if (!holding.add(request.complete ? 0 : bodyBytes(request, limits.maxRequestBytes))) return false;
    holdForRequest(request, holding);
    response.once('close', () => holding.release());
    countQueued(response, holding);
    return true;
  };

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const urlProblem = requestUrlProblem(request);
    if (urlProblem) {
      // A caller's mistake, logged as one: Yoga, which writes the access line, never sees it.
      log.info(
        { method: request.method?.slice(0, 16), status: 400, errors: ['BAD_REQUEST'], reason: urlProblem },
        'request refused: its URL cannot be read',
      );
      answerBadRequest(response, urlProblem);
      return;
    }
    if (admit(request, response)) {
      handler(request, response);
      return;
    }
    refusedRequests.inc({ reason: 'bytes_in_flight' });
    bodiesWarning.note();
    const body = busyBody(BODIES_MESSAGE);
    response.writeHead(503, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'retry-after': String(RETRY_AFTER_SECONDS),
      connection: 'close',
    });
    response.end(body);
  });

  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      timeouts.inc();
      timeoutWarning.note();
    }
    answerClientError(error, socket);
  });

  const watchWebSocket = (socket: Socket, closeWebSocket: (code: number, reason: string) => void): void => {
    let release: (() => void) | undefined;
    let overdue: NodeJS.Timeout | undefined;
    let closing = false;
    const messageOver = () => {
      release?.();
      release = undefined;
      clearTimeout(overdue);
      overdue = undefined;
    };
    const close = (code: number, reason: string) => {
      closing = true;
      messageOver();
      // ws sends the close frame and graphql-ws sends nothing more; the client's answer is not
      // handed to ws, so the socket goes once the client could read the frame.
      closeWebSocket(code, reason);
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    };
    const frames = new ClientFrames({
      started(announced) {
        // Refused here, as ws would refuse it past its maxPayload, but before ws reads it: ws
        // reports that as a socket error, which graphql-ws writes to stderr with its stack.
        if (announced !== undefined && announced > limits.maxRequestBytes) {
          close(MESSAGE_TOO_BIG, `A message may be at most ${limits.maxRequestBytes} bytes long.`);
          return;
        }
        release = reservations.reserve(Math.min(announced ?? limits.maxRequestBytes, limits.maxRequestBytes));
        if (release) return;
        refusedRequests.inc({ reason: 'bytes_in_flight' });
        bodiesWarning.note();
        close(TRY_AGAIN_LATER, WEBSOCKET_BUSY_REASON);
      },
      ended: messageOver,
    });
    // ws reads the socket through its 'data' listener: it is handed each read once that read is
    // known not to begin a refused message, so ws never buffers, and graphql-ws never runs, one.
    const wsReaders = socket.listeners('data') as ((this: Socket, chunk: Buffer) => void)[];
    socket.removeAllListeners('data');
    socket.on('data', (chunk: Buffer) => {
      if (closing) return;
      frames.push(chunk);
      if (closing) return;
      for (const read of wsReaders) read.call(socket, chunk);
      if (!frames.receiving || overdue) return;
      overdue = setTimeout(() => {
        timeouts.inc();
        timeoutWarning.note();
        close(POLICY_VIOLATION, WEBSOCKET_LATE_REASON);
      }, limits.requestTimeoutMs).unref();
    });
    socket.once('close', messageOver);
  };

  return {
    server,
    watchWebSocket,
    memoryBudget: reservations,
    registerMetrics(registry) {
      for (const metric of [openConnections, refusedConnections, refusedRequests, timeouts, bytesInFlight]) registry.registerMetric(metric);
    },
  };
}

