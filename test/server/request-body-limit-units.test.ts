/**
 * MAX_REQUEST_BYTES (src/gateway/plugins/compat/request-body-limit.ts) in a Yoga of its own, made inside each
 * test: the announced length, a body counted while read (streamed, or not framed by Node's HTTP
 * server), and a body Node framed, whose length is trusted (a stand-in IncomingMessage says what
 * Node's parser found). Over real HTTP through the whole gateway: request-body-limit.test.ts.
 */
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useRequestBodyLimit } from '../../src/gateway/plugins/compat/request-body-limit.js';

const schema = createSchema({
  typeDefs: 'type Query { echo(text: String): String }',
  resolvers: { Query: { echo: (_s: unknown, args: { text?: string }) => args.text ?? null } },
});

const LIMIT = 1000;
/** As the gateway makes it: Yoga's own body limit off, ours in its place. */
const yogaWith = (limit = LIMIT) => createYoga({ schema, logging: false, maxRequestBodySize: false, plugins: [useRequestBodyLimit(limit)] });

const QUERY = 'query($t: String) { echo(text: $t) }';
/** Bytes of a body whose padding is empty. */
const FRAME = JSON.stringify({ query: QUERY, variables: { t: '' } }).length;
/** A JSON body of exactly `bytes` bytes whose query echoes its padding. */
const bodyOf = (bytes: number) => JSON.stringify({ query: QUERY, variables: { t: 'x'.repeat(bytes - FRAME) } });

/** A request body handed over in the pieces given, as a stream (no Content-Length of its own). */
function streamOf(pieces: (string | Error)[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces[next++];
      if (piece === undefined) controller.close();
      else if (piece instanceof Error) controller.error(piece);
      else controller.enqueue(new TextEncoder().encode(piece));
    },
  });
}

/** Node's IncomingMessage as its HTTP parser leaves it, with the headers it read. */
function nodeRequest(headers: Record<string, string>): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.headers = headers;
  return req;
}

interface Answer {
  status: number;
  body: { data?: { echo: string | null }; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

async function post(
  body: BodyInit,
  headers: Record<string, string> = {},
  serverContext: Record<string, unknown> = {},
  yoga = yogaWith(),
): Promise<Answer> {
  const response = await yoga.fetch(
    'http://yoga.test/graphql',
    { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, duplex: 'half' } as RequestInit,
    serverContext,
  );
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const TOO_LARGE: Answer = {
  status: 413,
  body: { errors: [{ message: 'Request body too large', extensions: { code: 'REQUEST_ENTITY_TOO_LARGE' } }] },
};
const INVALID_LENGTH: Answer = {
  status: 400,
  body: { errors: [{ message: 'Content-Length header is invalid.', extensions: { code: 'BAD_REQUEST' } }] },
};
const BROKEN_OFF: Answer = {
  status: 400,
  body: { errors: [{ message: 'The request body ended before it was complete.', extensions: { code: 'BAD_REQUEST' } }] },
};
const padding = (answer: Answer) => answer.body.data?.echo?.length;

describe('the announced length', () => {
  it('serves a body announced at the limit, and refuses one announced a byte over it', async () => {
    const served = await post(bodyOf(LIMIT), { 'content-length': String(LIMIT) });
    expect(served.status).toBe(200);
    expect(JSON.stringify(served.body)).toContain('x'.repeat(50));
    expect(await post(bodyOf(LIMIT), { 'content-length': String(LIMIT + 1) })).toEqual(TOO_LARGE);
  });

  it('refuses by the announced length before reading anything, even from Node', async () => {
    const req = nodeRequest({ 'content-length': String(LIMIT + 1) });
    expect(await post(bodyOf(100), { 'content-length': String(LIMIT + 1) }, { req })).toEqual(TOO_LARGE);
  });

  it.each([['12, 12'], ['-1'], ['1e3'], ['0x10'], ['12a'], ['a12']])('refuses the Content-Length %j with 400', async (length) => {
    expect(await post(bodyOf(100), { 'content-length': length })).toEqual(INVALID_LENGTH);
  });
});

describe('a body counted while read', () => {
  it('serves a streamed body of exactly the limit, its pieces joined in order', async () => {
    const body = bodyOf(LIMIT);
    const answer = await post(streamOf([body.slice(0, 300), body.slice(300, 301), body.slice(301)]));
    expect(answer.status).toBe(200);
    expect(padding(answer)).toBe(LIMIT - FRAME);
  });

  it('refuses a streamed body a byte over the limit, wherever the pieces break', async () => {
    const body = bodyOf(LIMIT + 1);
    expect(await post(streamOf([body]))).toEqual(TOO_LARGE);
    expect(await post(streamOf([body.slice(0, LIMIT), body.slice(LIMIT)]))).toEqual(TOO_LARGE);
  });

  it('refuses a streamed body as soon as it passes the limit, without reading on', async () => {
    const body = bodyOf(LIMIT + 1);
    let pulls = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(new TextEncoder().encode(pulls === 1 ? body : 'x'));
      },
    });
    expect(await post(endless)).toEqual(TOO_LARGE);
    expect(pulls).toBeLessThan(5);
  });

  it('counts a body not framed by Node whatever length it announces', async () => {
    expect(await post(bodyOf(LIMIT + 1), { 'content-length': '100' })).toEqual(TOO_LARGE);
    const answer = await post(bodyOf(LIMIT), { 'content-length': '5' });
    expect(answer.status).toBe(200);
    expect(padding(answer)).toBe(LIMIT - FRAME);
  });

  it('counts a body from Node that was not framed by its length (chunked, or no length at all)', async () => {
    const big = bodyOf(LIMIT + 1);
    const chunked = nodeRequest({ 'content-length': '100', 'transfer-encoding': 'chunked' });
    expect(await post(big, { 'content-length': '100' }, { req: chunked })).toEqual(TOO_LARGE);
    expect(await post(big, { 'content-length': '100' }, { req: nodeRequest({}) })).toEqual(TOO_LARGE);
  });

  it('does not count again a body Node framed by its length: its parser read exactly that many bytes', async () => {
    // Stand-in: Node's parser would never hand over more than the length it announced.
    const req = nodeRequest({ 'content-length': '100' });
    const answer = await post(bodyOf(LIMIT + 1), { 'content-length': '100' }, { req });
    expect(answer.status).toBe(200);
    expect(padding(answer)).toBe(LIMIT + 1 - FRAME);
  });

  it('answers a body its client broke off with 400, whatever was read before', async () => {
    expect(await post(streamOf([new Error('aborted')]))).toEqual(BROKEN_OFF);
    expect(await post(streamOf(['{"query":', new Error('ECONNRESET')]))).toEqual(BROKEN_OFF);
  });

  it('leaves requests without a body, and bodies no parser reads, as Yoga answers them', async () => {
    const get = await yogaWith().fetch('http://yoga.test/graphql?query=%7B%20echo(text%3A%20%22hi%22)%20%7D', {
      headers: { accept: 'application/json' },
    });
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ data: { echo: 'hi' } });

    const plain = async (yoga: ReturnType<typeof yogaWith> | ReturnType<typeof createYoga>) => {
      const response = await yoga.fetch('http://yoga.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{ echo }',
      });
      return { status: response.status, body: await response.text() };
    };
    expect(await plain(yogaWith())).toEqual(await plain(createYoga({ schema, logging: false, maxRequestBodySize: false })));
  });
});
