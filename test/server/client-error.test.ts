/**
 * Requests Node's HTTP parser refuses before Yoga sees them used to get Node's empty 400 or 431.
 * Over a raw socket they get the same status with a JSON BAD_REQUEST error and `connection: close`;
 * each status and the connections closed without a word: client-error-units.test.ts.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError } from '../../src/client-error.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { runGateway } from '../helpers/process.js';

/** Sends raw bytes and resolves with everything the server wrote before it closed the connection. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

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

describe('the entry point', () => {
  it('answers a malformed request line with a JSON 400', { timeout: 90_000 }, async () => {
    const gateway = runGateway({});
    try {
      const { port } = new URL(await gateway.ready);
      const answer = parseAnswer(await exchange(Number(port), 'GARBAGE\r\n\r\n'));
      expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
      expect(answer.body).toEqual(refusal('The request is not valid HTTP.'));
    } finally {
      await gateway.stop('SIGKILL');
    }
  });
});
