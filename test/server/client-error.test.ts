/**
 * Requests Node's HTTP parser refuses before Yoga sees them used to get Node's empty 400 or 431.
 * Over a raw socket they get the same status with a JSON BAD_REQUEST error and `connection: close`;
 * each status and the connections closed without a word: client-error-units.test.ts.
 * A request without a Host header got Node's empty 400 too, and one whose Host is not a host a 500
 * whose text body was a TypeError's stack: both are a JSON 400, logged at info. The entry point's
 * wiring of these answers: test/startup.test.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError } from '../../src/server/client-error.js';
import { createGatewayServer } from '../../src/server/http-server.js';
import { createLogger } from '../../src/lib/logger.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { closeServer, exchange } from '../helpers/listen.js';
import { MemoryLog } from '../helpers/memory-log.js';

function parseAnswer(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => line.split(/:\s*/, 2).map((s) => s.toLowerCase())));
  return { statusLine, headers, body: JSON.parse(body) as unknown };
}

const refusal = (message: string) => ({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });

describe('requests the HTTP parser refuses', () => {
  let gateway: TestGateway;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    gateway = await startTestGateway();
    server = createServer((req, res) => void gateway.yoga(req, res)).on('clientError', answerClientError);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await gateway.close();
  });

  it('answers headers over 16 KB with 431 and a JSON BAD_REQUEST error', async () => {
    const answer = parseAnswer(await exchange(port, `GET /graphql HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(17_000)}\r\n\r\n`));
    expect(answer.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    expect(answer.body).toEqual(refusal('The request headers are too large.'));
  });

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    ['a malformed header', 'POST /graphql HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n'],
    ['a malformed chunked body', 'POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'],
  ])('answers %s with 400 and a JSON BAD_REQUEST error', async (_case, bytes) => {
    const answer = parseAnswer(await exchange(port, bytes));
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    expect(answer.body).toEqual(refusal('The request is not valid HTTP.'));
  });

  it('still serves a well-formed request on the same server', async () => {
    const answer = await exchange(port, 'GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('requests whose URL cannot be read', () => {
  let gateway: TestGateway;
  let server: Server;
  let port: number;
  const memory = new MemoryLog();
  beforeAll(async () => {
    gateway = await startTestGateway();
    const log = createLogger({ level: 'info', destination: memory });
    const limits = { maxConnections: 100, requestTimeoutMs: 5000, maxRequestBytesInFlight: 1024 * 1024, maxRequestBytes: 256 * 1024 };
    ({ server } = createGatewayServer((req, res) => void gateway.yoga(req, res), limits, log));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await closeServer(server);
    await gateway.close();
  });

  const BAD_HOST = 'The Host header is not a host name or address with an optional port.';
  const getWithHost = (host: string) => `GET /healthz HTTP/1.1\r\nhost: ${host}\r\n\r\n`;
  const postWithHost = (host: string) =>
    `POST /graphql HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\ncontent-length: 26\r\n\r\n{"query":"{ __typename }"}`;

  it.each([
    ['a space in the Host', getWithHost('a b'), BAD_HOST],
    ['an unclosed IPv6 address', postWithHost('[::1:bad'), BAD_HOST],
    ['a port past 65535', postWithHost('x:99999'), BAD_HOST],
    ['a path in the Host', getWithHost('x/graphql'), BAD_HOST],
    ['an empty Host', getWithHost(''), BAD_HOST],
    ['no Host header', 'GET /healthz HTTP/1.1\r\n\r\n', 'The request has no Host header.'],
    ['two Host headers', 'GET /healthz HTTP/1.1\r\nhost: a\r\nHost: b\r\n\r\n', 'The request has more than one Host header.'],
    ['an absolute target the Host cannot join', 'GET http://a/healthz HTTP/1.1\r\nhost: x:80\r\n\r\n', 'The request target is not a valid path.'],
  ])('answers %s with 400 and a JSON BAD_REQUEST error, logged at info', async (_case, bytes, message) => {
    const before = memory.lines().length;
    const answer = parseAnswer(await exchange(port, bytes));
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    expect(answer.body).toEqual(refusal(message));
    expect(memory.lines().slice(before)).toEqual([
      expect.objectContaining({ level: 30, msg: 'request refused: its URL cannot be read', status: 400, reason: message }),
    ]);
  });

  it.each(['localhost:4000', '[::1]:4000', '127.0.0.1', 'gateway.example.com', 'GATEWAY.example.com:'])(
    'serves a request with Host %s',
    async (host) => {
      expect(await exchange(port, getWithHost(host))).toMatch(/^HTTP\/1\.1 200 /);
    },
  );

  it('serves HTTP/1.0 without a Host header, as Node does', async () => {
    expect(await exchange(port, 'GET /healthz HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('answers an operation once its Host is well-formed', async () => {
    expect(await exchange(port, postWithHost('x:4000'))).toMatch(/^HTTP\/1\.1 200 [^]*\{"data":\{"__typename":"Query"\}\}$/);
  });
});
