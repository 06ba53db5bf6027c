/**
 * MAX_REQUEST_BYTES over real HTTP: a body is refused with 413 BAD_REQUEST by its announced length,
 * or, sent without one (chunked), as soon as the bytes read pass the limit. A request that Node's
 * HTTP server did not frame (handed to yoga.fetch) is counted while read whatever length it announces.
 * A body its client breaks off is the client's mistake, whichever way it was framed.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const LIMIT = 65_536;
let gateway: TestGateway;
let server: Server;
let port: number;

beforeAll(async () => {
  gateway = await startTestGateway({ env: { MAX_REQUEST_BYTES: String(LIMIT) } });
  server = createServer((req, res) => void gateway.yoga(req, res));
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

const upstreamCalls = () => {
  const c = gateway.sim.control.counters();
  return c.token + c.audit + c.session + c.files;
};

/** A POST whose body is written chunk by chunk (no Content-Length); `end: false` leaves it open. */
function postChunked(chunks: string[], end: boolean): Promise<{ response: IncomingMessage; body: string; abort: () => void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/graphql',
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
    });
    req.on('error', reject);
    req.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ response, body, abort: () => req.destroy() }));
    });
    for (const chunk of chunks) req.write(chunk);
    if (end) req.end();
  });
}

/** Sends a request's head and the start of its body, then closes the connection without a word. */
async function breakOff(head: string, partOfBody: string): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(`POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${head}\r\n${partOfBody}`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.destroy();
}

const padded = (bytes: number) => JSON.stringify({ query: '{ __typename }', variables: { padding: 'x'.repeat(bytes) } });

describe('request body limit', () => {
  it('refuses a body announced larger than the limit with 413 BAD_REQUEST, and calls no upstream', async () => {
    gateway.sim.control.resetCounters();
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: padded(LIMIT),
    });
    expect(response.status).toBe(413);
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors).toEqual([
      { message: `The request body is larger than ${LIMIT} bytes.`, extensions: { code: 'BAD_REQUEST' } },
    ]);
    expect(upstreamCalls()).toBe(0);
  });

  it('serves a chunked body (no Content-Length) within the limit', async () => {
    const json = JSON.stringify({ query: '{ __typename }' });
    const { response, body } = await postChunked([json.slice(0, 5), json.slice(5)], true);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(body)).toEqual({ data: { __typename: 'Query' } });
  });

  it('refuses a chunked body with 413 BAD_REQUEST once it passes the limit, without waiting for its end', async () => {
    const chunk = 'x'.repeat(16_384);
    // The body never ends: only a refusal made while reading can answer it.
    const body = `{"query":"{ __typename }","variables":{"padding":"${chunk.repeat(5)}`;
    const sent = await postChunked([body], false);
    sent.abort();
    expect(sent.response.statusCode).toBe(413);
    const parsed = JSON.parse(sent.body) as { errors: { message: string; extensions: { code: string } }[] };
    expect(parsed.errors.map((e) => [e.message, e.extensions.code])).toEqual([
      [`The request body is larger than ${LIMIT} bytes.`, 'BAD_REQUEST'],
    ]);
  });

  it('serves a body announced within the limit, sent with its Content-Length', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: padded(LIMIT - 1000),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('counts a body not framed by Node while it is read, even when it announces a small length', async () => {
    gateway.sim.control.resetCounters();
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '100' },
      body: padded(LIMIT),
    });
    expect(response.status).toBe(413);
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors.map((e) => [e.message, e.extensions.code])).toEqual([
      [`The request body is larger than ${LIMIT} bytes.`, 'BAD_REQUEST'],
    ]);
    expect(upstreamCalls()).toBe(0);
  });

  it('refuses a malformed Content-Length with 400 BAD_REQUEST', async () => {
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '12, 12' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors.map((e) => e.extensions.code)).toEqual(['BAD_REQUEST']);
  });

  it('takes a body its client broke off for its mistake, chunked as with a Content-Length: 400 BAD_REQUEST and nothing at error', async () => {
    const before = gateway.logs().length;
    await breakOff('content-length: 100\r\n', '{"query":');
    await breakOff('transfer-encoding: chunked\r\n', '9\r\n{"query":');
    await vi.waitFor(() => expect(gateway.logs().slice(before).filter((l) => l.msg === 'request')).toHaveLength(2));

    const written = gateway.logs().slice(before);
    expect(written.filter((l) => l.msg === 'request')).toMatchObject([
      { status: 400, errors: ['BAD_REQUEST'] },
      { status: 400, errors: ['BAD_REQUEST'] },
    ]);
    expect(written.filter((l) => (l.level as number) >= 40)).toEqual([]);
  });
});
