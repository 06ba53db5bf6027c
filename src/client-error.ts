/**
 * Requests Node's HTTP parser refuses before the gateway sees them (headers over 16 KB, a malformed
 * request line, a request that does not arrive in time): Node answers them with an empty 400, 431
 * or 408. The same status here carries a JSON error with code BAD_REQUEST, like every other refusal.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Node's own choice of status for the parser errors it does not answer with 400. */
const STATUS_OF: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

const MESSAGE_OF: Readonly<Record<number, string>> = {
  400: 'The request is not valid HTTP.',
  408: 'The request did not arrive in time.',
  413: 'The chunk extensions of the request body are too large.',
  431: 'The request headers are too large.',
};

export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node does: a connection the peer reset, or one that cannot be written, is closed without a
  // word; so is one whose response has started (the refusal would land in the middle of it).
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  // Stryker disable next-line StringLiteral: no code and an unknown one both answer 400
  const status = STATUS_OF[error.code ?? ''] ?? 400;
  const body = JSON.stringify({ errors: [{ message: MESSAGE_OF[status], extensions: { code: 'BAD_REQUEST' } }] });
  answerAndClose(
    socket,
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}

/** How long a connection stays open after its last answer, for the client to read it. */
const LINGER_MS = 1000;

/**
 * Writes a last answer and closes the connection. What the client sends meanwhile is read and
 * dropped (closing with unread bytes would reset the answer away), and the connection is
 * destroyed once the client closes its side (Node destroys a socket whose two sides are done) or
 * after a second, whichever is first: a client that never closes (the server's sockets allow
 * half-open connections) does not keep it.
 */
export function answerAndClose(socket: Duplex, answer: string): void {
  socket.on('error', () => socket.destroy());
  socket.end(answer);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  // Stryker disable next-line StringLiteral,ArrowFunction: an uncancelled timer destroys the closed socket a second later, which does nothing
  socket.once('close', () => clearTimeout(timer));
}
