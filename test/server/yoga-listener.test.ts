/**
 * An error that escapes Yoga's own handling (a plugin's onRequest or onResponse hook) reached
 * whatwg-node's request listener, which answered 500 with the error's stack as text/plain and
 * logged nothing. The gateway's listener answers it with a JSON INTERNAL_SERVER_ERROR and logs it
 * once, at error, with its stack.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { GatewayYoga } from '../../src/yoga.js';
import { yogaListener } from '../../src/yoga-listener.js';
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

describe("the gateway's request listener", () => {
  const memory = new MemoryLog();
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const yoga = createYoga({ schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }), plugins: [failingHook], logging: false });
    server = createServer(yogaListener(yoga as unknown as GatewayYoga, createLogger({ level: 'info', destination: memory })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => closeServer(server));

  it.each(['/fails-on-request', '/fails-on-response'])('answers an error thrown by a hook at %s with a JSON 500, no stack', async (path) => {
    const before = memory.lines().length;
    const response = await fetch(`${base}${path}`);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
    expect(text).not.toContain(SECRET_PATH);
    const lines = memory.lines().slice(before);
    expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'unexpected error' })]);
    expect(lines[0]!.err.stack).toContain(SECRET_PATH);
  });

  it('answers everything else as Yoga does', async () => {
    const response = await fetch(`${base}/graphql?query=%7Bok%7D`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { ok: null } });
  });
});
