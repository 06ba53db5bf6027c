/**
 * An error that escapes Yoga's own handling (a plugin's onRequest or onResponse hook) reached
 * whatwg-node's request listener, which answered 500 with the error's stack as text/plain and
 * logged nothing. The gateway's listener answers it with a JSON INTERNAL_SERVER_ERROR and logs it
 * once, at error, with its stack. An answer that cannot be sent is logged, and its connection
 * cut, so that the client sees it fail rather than wait.
 */
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import type { GatewayYoga } from '../../src/gateway/yoga.js';
import { yogaListener } from '../../src/server/compat/node-listener.js';
import { closeServer } from '../helpers/listen.js';
import { MemoryLog } from '../helpers/memory-log.js';

const SECRET_PATH = '/srv/gateway/internal/secret-module.ts';

/** Throws, for the paths that ask for it, where Yoga does not catch. */
const failingHook: Plugin = {
  onRequest({ url }) {
    if (url.pathname === '/fails-on-request') throw new Error(`failed at ${SECRET_PATH}`);
  },
  onResponse({ request }) {
    if (request.url.endsWith('/fails-on-response')) throw new TypeError(`failed at ${SECRET_PATH}`);
  },
};

/** Answers /fails-while-sent with a header Node refuses to send (fetch's Headers allow a control character). */
const unsendable: Plugin = {
  onRequest({ url, fetchAPI, endResponse }) {
    if (url.pathname === '/fails-while-sent') endResponse(new fetchAPI.Response('{}', { headers: { 'x-note': 'a\u0001b' } }));
  },
};

/** What a plugin finds of Node's request and response in its server context (the body limit and the row budget read them). */
let nodeObjects: unknown[] = [];
const readsNodeObjects: Plugin = {
  onRequest({ serverContext }) {
    const { req, res } = serverContext as { req?: unknown; res?: unknown };
    nodeObjects = [req instanceof IncomingMessage, res instanceof ServerResponse];
  },
};

describe("the gateway's request listener", () => {
  let server: Server | undefined;
  afterEach(() => server && closeServer(server));

  /** Made in each test: a listener made while the file is collected would be made before a mutant is active. */
  async function serve() {
    const memory = new MemoryLog();
    const yoga = createYoga({ schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }), plugins: [failingHook, unsendable, readsNodeObjects], logging: false });
    server = createServer(yogaListener(yoga as unknown as GatewayYoga, createLogger({ level: 'info', destination: memory })));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { memory, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  it.each(['/fails-on-request', '/fails-on-response'])('answers an error thrown by a hook at %s with a JSON 500, no stack', async (path) => {
    const { memory, base } = await serve();
    const response = await fetch(`${base}${path}`);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
    expect(text).not.toContain(SECRET_PATH);
    const lines = memory.lines();
    expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'unexpected error' })]);
    expect(lines[0]!.err.stack).toContain(SECRET_PATH);
  });

  it('cuts the connection of an answer that cannot be sent, and logs it', async () => {
    const { memory, base } = await serve();
    // Cut, not left open: the client's request ends with the connection, before its own timeout.
    await expect(fetch(`${base}/fails-while-sent`, { signal: AbortSignal.timeout(5000) })).rejects.toMatchObject({ cause: { code: 'UND_ERR_SOCKET' } });
    await expect.poll(() => memory.lines()).toEqual([expect.objectContaining({ level: 50, msg: 'response could not be sent' })]);
    expect(memory.lines()[0]!.err.message).toMatch(/^Invalid character in header/);
  });

  it('answers everything else as Yoga does, and logs nothing', async () => {
    const { memory, base } = await serve();
    const response = await fetch(`${base}/graphql?query=%7Bok%7D`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { ok: null } });
    expect(memory.lines()).toEqual([]);
  });

  it("gives plugins Node's request and response, as whatwg-node's listener does", async () => {
    const { base } = await serve();
    nodeObjects = [];
    await fetch(`${base}/graphql?query=%7Bok%7D`, { headers: { accept: 'application/json' } });
    expect(nodeObjects).toEqual([true, true]);
  });
});
