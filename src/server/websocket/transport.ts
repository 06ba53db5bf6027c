/**
 * graphql-ws served on ws sockets, as graphql-ws's own `use/ws` binding does, with the bounds that
 * binding lacks, so that what a client that does not read makes the process hold stays small:
 *
 * - A `ping` is answered by a `pong` without payload (the protocol lets the server choose), and at
 *   most one pong waits for the client: pings, fat or many, make the gateway queue next to nothing.
 * - What waits for a client is bounded (SendQueue): a socket that has not taken what it was sent
 *   is closed with 1008 once its queue passes its bound, whatever is being sent.
 * - A socket being closed, for whatever reason (no `connection_init` in time, a protocol error,
 *   its queue, an expired token, the drain), is cut off when its client has not completed the close
 *   within CLOSE_TIMEOUT_MS: ws (`closeTimeout`) would wait 30 s, holding what was queued for it.
 */
import type { IncomingMessage } from 'node:http';
import { getHeapStatistics } from 'node:v8';
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../../lib/logger.js';

/** How long a closing socket's client has to answer the close before the socket is cut off. */
export const CLOSE_TIMEOUT_MS = 1000;
/** RFC 6455 §7.4.1: the client broke a rule of the server's (here: it does not read what it is sent). */
export const POLICY_VIOLATION = 1008;
export const QUEUE_FULL_REASON = 'The client did not read what it was sent.';
/** A keep-alive ping this often; a client that has not answered by the next one is cut off (as graphql-ws's binding does). */
const KEEP_ALIVE_MS = 12_000;
/** What ws and Node keep for a queued message besides its bytes (frame header, buffers, write request). */
export const PER_MESSAGE_BYTES = 512;
const PONG = '{"type":"pong"}';

/**
 * What one socket may have queued for its client before anything more is refused: 1/32 of the
 * heap (8 MB at the production 256 MB), at least 1 MB. A message is queued whenever the queue is
 * below the bound, so a client that reads gets even an answer larger than the bound (a full
 * 5000-row page is about 6 MB); a socket holds at most the bound plus one message.
 */
export function sendQueueBytes(heapBytes = getHeapStatistics().heap_size_limit): number {
  return Math.max(1024 * 1024, Math.floor(heapBytes / 32));
}

/** What waits for one socket's client: counted from each send until ws has handed it to the network. */
export class SendQueue {
  #queued = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly bound: number,
    private readonly onFull: () => void,
  ) {}

  /** Bytes queued for the client, each message counted with PER_MESSAGE_BYTES more. */
  get queued(): number {
    return this.#queued;
  }

  /** Resolves once the message has left (or was dropped: the socket is closing, or its queue is full). */
  send(data: string): Promise<void> {
    if (this.socket.readyState !== this.socket.OPEN) return Promise.resolve();
    const bytes = Buffer.byteLength(data) + PER_MESSAGE_BYTES;
    if (!this.#admits(bytes)) {
      this.onFull();
      return Promise.resolve();
    }
    this.#queued += bytes;
    return new Promise((resolve) =>
      this.socket.send(data, () => {
        this.#queued -= bytes;
        resolve();
      }),
    );
  }

  /** The one decision whether a message may wait for this client (a process-wide count joins here). */
  #admits(_bytes: number): boolean {
    return this.#queued < this.bound;
  }

  /** Cuts the socket off if its client has not taken everything it was sent. */
  endIfUndrained(): void {
    if (this.#queued > 0 || this.socket.bufferedAmount > 0) this.socket.terminate();
  }
}

/** What graphql-ws's hooks get as `ctx.extra`. */
export interface SocketExtra {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
  readonly queue: SendQueue;
}

export interface TransportOptions {
  readonly log: Logger;
  /** Per socket; the default: sendQueueBytes(). */
  readonly sendQueueBytes?: number;
  /** graphql-ws's, 3 s by default. */
  readonly connectionInitWaitTimeout?: number;
}

export interface GraphqlWsServer {
  readonly wsServer: WebSocketServer;
  /** Closes every socket with this code (each cut off CLOSE_TIMEOUT_MS later if it has not closed), and stops accepting. */
  close(code: number, reason: string): Promise<void>;
}

/** A WebSocketServer on `server`'s path speaking graphql-transport-ws through graphql-ws's `makeServer`. */
export function serveGraphqlWs<P extends Record<string, unknown>>(
  wsOptions: ConstructorParameters<typeof WebSocketServer>[0],
  options: ServerOptions<P, SocketExtra>,
  transport: TransportOptions,
  /** Sees each accepted socket before any of its messages is read. */
  onSocket?: (socket: WebSocket, request: IncomingMessage) => void,
): GraphqlWsServer {
  const { log } = transport;
  const bound = transport.sendQueueBytes ?? sendQueueBytes();
  // `closeTimeout` (ws 8.19) is not in @types/ws yet.
  const wsServer = new WebSocketServer({ ...wsOptions, closeTimeout: CLOSE_TIMEOUT_MS, handleProtocols } as typeof wsOptions);
  const server = makeServer<P, SocketExtra>({
    ...(transport.connectionInitWaitTimeout !== undefined ? { connectionInitWaitTimeout: transport.connectionInitWaitTimeout } : {}),
    ...options,
  });

  wsServer.on('connection', (socket, request) => {
    onSocket?.(socket, request);
    // ws ends the connection itself after a protocol error (a bad frame, an oversized message).
    socket.on('error', (error) => log.info({ err: error.message }, 'websocket connection error'));
    const queue = new SendQueue(socket, bound, () => {
      if (socket.readyState !== socket.OPEN) return;
      log.info({ queuedBytes: queue.queued, boundBytes: bound }, 'websocket closed: its client does not read what it is sent');
      socket.close(POLICY_VIOLATION, QUEUE_FULL_REASON);
    });
    let pongWaiting = false;
    let answeredPing = true;
    socket.on('pong', () => (answeredPing = true));
    const keepAlive = setInterval(() => {
      if (!answeredPing) return socket.terminate();
      answeredPing = false;
      socket.ping();
    }, KEEP_ALIVE_MS).unref();

    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) => queue.send(data),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', (data) => {
            handle(String(data)).catch((error: unknown) => {
              log.error({ err: error }, 'websocket message handling failed');
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            });
          }),
        onPing: () => {
          if (pongWaiting) return;
          pongWaiting = true;
          void queue.send(PONG).then(() => (pongWaiting = false));
        },
        onPong: () => undefined,
      },
      { socket, request, queue },
    );
    socket.once('close', (code, reason) => {
      clearInterval(keepAlive);
      Promise.resolve(closed(code, String(reason))).catch((error: unknown) => log.warn({ err: error }, 'websocket close handling failed'));
    });
  });

  return {
    wsServer,
    close(code, reason) {
      for (const socket of wsServer.clients) socket.close(code, reason);
      return new Promise<void>((resolve) => wsServer.close(() => resolve()));
    },
  };
}
