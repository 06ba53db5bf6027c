/** graphql-ws on ws in place of graphql-ws 6.4's `useServer`, which echoes ping payloads and queues without bound. */
import type { IncomingMessage, Server } from 'node:http';
import { getHeapStatistics } from 'node:v8';
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../../lib/logger.js';

/** A close the client does not answer (or one whose answer is not read) ends the socket after this. */
const CLOSE_TIMEOUT_MS = 1000;
/** A keep-alive ping this often; a client that has not answered by the next one is cut off, as useServer does. */
const KEEP_ALIVE_MS = 12_000;
/** What ws and Node keep for a queued message besides its bytes (frame header, buffers, write request). */
export const PER_MESSAGE_BYTES = 512;
const PONG = '{"type":"pong"}';

/** What one socket may have queued for its client: 1/32 of the heap, at least 1 MB (and one message past it). */
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

  get queued(): number {
    return this.#queued;
  }

  /** Resolves once the message has left, or was dropped (the socket is closing, or its queue is full). */
  send(data: string): Promise<void> {
    if (this.socket.readyState !== this.socket.OPEN) return Promise.resolve();
    if (this.#queued >= this.bound) {
      this.onFull();
      return Promise.resolve();
    }
    const bytes = Buffer.byteLength(data) + PER_MESSAGE_BYTES;
    this.#queued += bytes;
    return new Promise((resolve) =>
      this.socket.send(data, () => {
        this.#queued -= bytes;
        resolve();
      }),
    );
  }

  endIfUndrained(): void {
    if (this.#queued > 0 || this.socket.bufferedAmount > 0) this.socket.terminate();
  }
}

export type SocketExtra = { readonly socket: WebSocket; readonly request: IncomingMessage; readonly queue: SendQueue };

export interface BindingOptions {
  readonly log: Logger;
  readonly maxPayloadBytes: number;
  /** Given each accepted connection as its handshake completes, in the same turn: before any of its messages is read. */
  readonly watchSocket?: (socket: WebSocket, upgrade: IncomingMessage) => void;
  readonly sendQueueBytes?: number;
}

export function serveGraphqlWs(
  server: Server,
  { log, maxPayloadBytes, watchSocket, sendQueueBytes: bound = sendQueueBytes() }: BindingOptions,
  options: ServerOptions<Record<string, unknown>, SocketExtra>,
): WebSocketServer {
  // A variable, not a literal: @types/ws does not list ws's closeTimeout.
  const wsOptions = { server, path: '/graphql', maxPayload: maxPayloadBytes, closeTimeout: CLOSE_TIMEOUT_MS, handleProtocols };
  const wsServer = new WebSocketServer(wsOptions);
  const graphqlWs = makeServer(options);

  wsServer.on('connection', (socket, request) => {
    watchSocket?.(socket, request);
    // ws ends the connection itself after a protocol error (a bad frame, an oversized message).
    socket.on('error', (error) => log.info({ err: error.message }, 'websocket connection error'));
    const queue = new SendQueue(socket, bound, () => {
      if (socket.readyState !== socket.OPEN) return;
      log.info({ queuedBytes: queue.queued, boundBytes: bound }, 'websocket closed: its client does not read what it is sent');
      socket.close(1008, 'The client did not read what it was sent.');
    });
    let pongWaiting = false;
    let answeredPing = true;
    socket.on('pong', () => (answeredPing = true));
    const keepAlive = setInterval(() => {
      if (!answeredPing) return socket.terminate();
      answeredPing = false;
      socket.ping();
    }, KEEP_ALIVE_MS).unref();

    const closed = graphqlWs.opened(
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
      },
      { socket, request, queue },
    );
    socket.once('close', (code, reason) => {
      clearInterval(keepAlive);
      Promise.resolve(closed(code, String(reason))).catch((error: unknown) => log.warn({ err: error }, 'websocket close handling failed'));
    });
  });
  return wsServer;
}
