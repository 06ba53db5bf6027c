/**
 * What answerClientError (src/server/client-error.ts) writes for each refusal of Node's HTTP parser, and
 * the connections it closes without a word, on a socket that records what is written to it; which
 * requests requestUrlProblem refuses for their Host and target. Over a real socket:
 * client-error.test.ts.
 */
import { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { answerClientError, requestUrlProblem } from '../../src/server/client-error.js';

/** A socket that records what is written to it. */
function fakeSocket() {
  const written: string[] = [];
  const socket = new Duplex({
    read() {},
    write(chunk, _encoding, done) {
      written.push(String(chunk));
      done();
    },
  });
  return { socket, written };
}

const parserError = (code?: string) => Object.assign(new Error(code ?? 'no code'), { code });

/** The whole response, as the client reads it. */
function response(status: string, message: string): string {
  const body = JSON.stringify({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });
  return (
    `HTTP/1.1 ${status}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${body.length}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

describe('answerClientError', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', '431 Request Header Fields Too Large', 'The request headers are too large.'],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', '413 Payload Too Large', 'The chunk extensions of the request body are too large.'],
    ['ERR_HTTP_REQUEST_TIMEOUT', '408 Request Timeout', 'The request did not arrive in time.'],
    ['HPE_INVALID_METHOD', '400 Bad Request', 'The request is not valid HTTP.'],
    [undefined, '400 Bad Request', 'The request is not valid HTTP.'],
  ])('answers %s with %s, a JSON BAD_REQUEST error, and ends the connection', (code, status, message) => {
    const { socket, written } = fakeSocket();
    answerClientError(parserError(code), socket);
    expect(written.join('')).toBe(response(status, message));
    expect(socket.writableEnded).toBe(true);
  });

  it('answers on a connection whose previous response is over, or that had none', () => {
    for (const inFlight of [{ headersSent: false }, null]) {
      const { socket, written } = fakeSocket();
      Object.assign(socket, { _httpMessage: inFlight });
      answerClientError(parserError('HPE_INVALID_METHOD'), socket);
      expect(written.join('')).toBe(response('400 Bad Request', 'The request is not valid HTTP.'));
    }
  });

  it('closes a connection the peer reset without writing to it', () => {
    const { socket, written } = fakeSocket();
    answerClientError(parserError('ECONNRESET'), socket);
    expect(socket.destroyed).toBe(true);
    expect(written).toEqual([]);
  });

  it('closes a connection that cannot be written', () => {
    const { socket, written } = fakeSocket();
    socket.end();
    answerClientError(parserError('HPE_INVALID_METHOD'), socket);
    expect(socket.destroyed).toBe(true);
    expect(written).toEqual([]);
  });

  it('does not write a refusal into a response that has started', () => {
    const { socket, written } = fakeSocket();
    Object.assign(socket, { _httpMessage: { headersSent: true } });
    answerClientError(parserError('HPE_INVALID_CHUNK_SIZE'), socket);
    expect(socket.destroyed).toBe(true);
    expect(written).toEqual([]);
  });
});

describe('the connection after the answer', () => {
  it('reads and drops what the client still sends, and is closed once the client has closed its side', async () => {
    const { socket } = fakeSocket();
    answerClientError(parserError('HPE_INVALID_METHOD'), socket);
    socket.push('GET / HTTP/1.1\r\n\r\n');
    await sleep(10);
    expect(socket.destroyed).toBe(false);
    socket.push(null);
    await sleep(10);
    expect(socket.destroyed).toBe(true);
  });

  it('is closed a second after the answer when the client never closes its side', async () => {
    const { socket } = fakeSocket();
    answerClientError(parserError('HPE_INVALID_METHOD'), socket);
    const answeredAt = Date.now();
    await sleep(300);
    expect(socket.destroyed).toBe(false);
    // Polled, not slept: on a loaded machine a timer may fire late, never early.
    await vi.waitFor(() => expect(socket.destroyed).toBe(true), { timeout: 3000, interval: 20 });
    expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(990);
  });

  it('is closed, and the process goes on, when the connection fails after the answer', () => {
    const { socket } = fakeSocket();
    answerClientError(parserError('HPE_INVALID_METHOD'), socket);
    // Without a listener, an error on the socket would be thrown as an uncaught exception.
    socket.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    expect(socket.destroyed).toBe(true);
  });
});

describe('requestUrlProblem', () => {
  const request = (host: string | undefined, url = '/graphql', httpVersionMinor = 1, rawHeaders = host === undefined ? [] : ['Host', host]) =>
    ({ headers: host === undefined ? {} : { host }, rawHeaders, url, httpVersionMinor }) as IncomingMessage;
  const BAD_HOST = 'The Host header is not a host name or address with an optional port.';

  it.each(['x', 'x:4000', 'x:', '127.0.0.1:80', '[::1]', '[::ffff:127.0.0.1]:4000', "a-b_c.~!$&'()*+,;=%41.example"])(
    'reads a request with Host %s',
    (host) => {
      expect(requestUrlProblem(request(host))).toBeUndefined();
    },
  );

  it.each(['', 'a b', 'x/y', 'x?y', 'x#y', 'u@x', '[::1:bad', '[::1]x', 'x:99999', 'x:1:2', 'x:a', '%zz', 'bücher.example'])(
    'refuses Host %j',
    (host) => {
      expect(requestUrlProblem(request(host))).toBe(BAD_HOST);
    },
  );

  it('refuses HTTP/1.1 without a Host, and reads HTTP/1.0 without one', () => {
    expect(requestUrlProblem(request(undefined))).toBe('The request has no Host header.');
    expect(requestUrlProblem(request(undefined, '/graphql', 0))).toBeUndefined();
    expect(requestUrlProblem(request(undefined, '/', 0))).toBeUndefined();
  });

  it('refuses a request with more than one Host header, whatever their case and values', () => {
    const SEVERAL = 'The request has more than one Host header.';
    expect(requestUrlProblem(request('a', '/graphql', 1, ['Host', 'a', 'accept', '*/*', 'host', 'b']))).toBe(SEVERAL);
    expect(requestUrlProblem(request('a', '/graphql', 1, ['HOST', 'a', 'Host', 'a']))).toBe(SEVERAL);
    expect(requestUrlProblem(request('a', '/graphql', 0, ['host', 'a', 'host', 'a', 'host', 'a']))).toBe(SEVERAL);
  });

  it('reads one Host among other headers, of its length or whose names only look like it', () => {
    const raw = ['x-host', 'b', 'Date', 'x', 'Host', 'a', 'hosts', 'c', 'hos', 'd', 'x-forwarded-host', 'e', 'ghost', 'f', 'from', 'y'];
    expect(requestUrlProblem(request('a', '/graphql', 1, raw))).toBeUndefined();
  });

  it('refuses a target that does not join the Host into a URL', () => {
    expect(requestUrlProblem(request('x:80', 'http://a/graphql'))).toBe('The request target is not a valid path.');
    expect(requestUrlProblem(request(undefined, ':99999', 0))).toBe('The request target is not a valid path.');
    expect(requestUrlProblem(request('x', '*'))).toBeUndefined();
  });
});
