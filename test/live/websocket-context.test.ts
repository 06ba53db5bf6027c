/**
 * What the WebSocket handshake settles (request id, caller) reaches every operation of the
 * connection: its log lines and the checks that depend on the caller.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startLiveServer, wsClient, type LiveServer } from './live-server.js';

let server: LiveServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Result = { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };

async function runOverWs(url: string, query: string): Promise<Result> {
  const client = wsClient(url);
  try {
    const iterator = client.iterate({ query }) as AsyncIterableIterator<Result>;
    const { value } = await iterator.next();
    await iterator.return?.();
    return value as Result;
  } finally {
    await client.dispose();
  }
}

describe('operations over a WebSocket', () => {
  it("log with the request id of the connection's handshake", async () => {
    server = await startLiveServer();
    const result = await runOverWs(server.url, '{ updateSession(id: "no-such-session") { id } }');
    expect(result.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);

    const handshake = server.logs().filter((l) => l.msg === 'request' && l.path === '/graphql');
    expect(handshake).toHaveLength(1);
    expect(handshake[0]).toMatchObject({ status: 200, caller: 'api-key:0' });
    const requestId = handshake[0]!.requestId as string;
    expect(requestId).toMatch(/^[\w.:-]+$/);
    // The upstream call's line and the field error's line.
    const notFound = server.logs().filter((l) => l.code === 'NOT_FOUND');
    expect(notFound.some((l) => Array.isArray(l.path) && l.path[0] === 'updateSession')).toBe(true);
    expect(notFound.map((l) => l.requestId)).toEqual(notFound.map(() => requestId));
  });

  it('run as the caller the handshake admitted: introspection for an API-key caller', async () => {
    // Upstream mode: introspection is for authenticated callers only.
    server = await startLiveServer();
    expect(server.config.introspection).toBe('authenticated');
    const result = await runOverWs(server.url, '{ __schema { queryType { name } } }');
    expect(result.errors).toBeUndefined();
    expect(result.data.__schema.queryType.name).toBe('Query');
  });
});
