/** Requests refused before Yoga sees them: Node's status, with a JSON BAD_REQUEST error instead of an empty body. */
import { STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

const NOT_HTTP = [400, 'The request is not valid HTTP.'] as const;
/** Node's own choice of status for the parser errors it does not answer with 400. */
const ANSWER_OF: Readonly<Record<string, readonly [number, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'The request headers are too large.'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'The chunk extensions of the request body are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request did not arrive in time.'],
};

const JSON_TYPE = 'application/json; charset=utf-8';

export const errorBody = (message: string, code: string) => JSON.stringify({ errors: [{ message, extensions: { code } }] });

/** A whole HTTP answer that closes its connection, for a socket no ServerResponse writes to. */
export function rawAnswer(status: number, body: string, headers: Readonly<Record<string, string>> = {}): string {
  const lines = Object.entries({ 'content-type': JSON_TYPE, 'content-length': String(Buffer.byteLength(body)), ...headers, connection: 'close' });
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`;
}

export function answerJson(response: ServerResponse, status: number, body: string, headers: OutgoingHttpHeaders = {}): void {
  response.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), ...headers, connection: 'close' });
  response.end(body);
}

export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node does: a reset or unwritable connection, or one whose response has started, closes without a word.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, message] = ANSWER_OF[error.code ?? ''] ?? NOT_HTTP;
  answerAndClose(socket, rawAnswer(status, errorBody(message, 'BAD_REQUEST')));
}

/** A host as RFC 3986 writes it (a name, an IPv4 address, a bracketed IPv6 one), with an optional port. */
const HOST = /^(?:\[[\dA-Fa-f:.]+\]|[\w\-.~!$&'()*+,;=%]+)(?::\d*)?$/;

/** Why the request's URL cannot be read (RFC 9112 §3.2: 400); whatwg-node would answer its TypeError 500 with a stack. */
export function requestUrlProblem({ headers: { host }, rawHeaders, httpVersionMinor, url }: IncomingMessage): string | undefined {
  if (host === undefined) {
    // HTTP/1.0 needs no Host: whatwg-node uses the address the request came in on.
    if (httpVersionMinor !== 0) return 'The request has no Host header.';
  } else if (rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'host').length > 1) {
    // Node keeps the first of several Host headers; which host the client meant is anyone's guess.
    return 'The request has more than one Host header.';
  } else if (!(HOST.test(host) && URL.canParse(`http://${host}`))) {
    return 'The Host header is not a host name or address with an optional port.';
  }
  if (!URL.canParse(`http://${host ?? 'localhost'}${url}`)) return 'The request target is not a valid path.';
  return undefined;
}

/** Writes a last answer and closes, dropping what the client sends meanwhile: unread bytes would reset the answer. */
export function answerAndClose(socket: Duplex, answer: string): void {
  socket.on('error', () => socket.destroy());
  socket.end(answer);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), 1000).unref();
  socket.once('close', () => clearTimeout(timer));
}
