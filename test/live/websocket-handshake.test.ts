/**
 * What a WebSocket's `connection_init` carries is read as the HTTP headers of the same names:
 * whatever their case, a value that is no header value refused as missing (4403, not an internal
 * error), and W3C trace context passed on from the params or from the upgrade request's headers.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { API_KEY, startLiveServer, wsClient, type LiveServer } from './live-server.js';

let server: LiveServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Outcome = { data?: unknown; closeCode?: number; closeReason?: string };

/** Runs `{ __typename }` over a WebSocket made by `client`, and says how it ended. */
async function typename(client: ReturnType<typeof createClient>): Promise<Outcome> {
  try {
    return await new Promise<Outcome>((resolve) => {
      client.subscribe(
        { query: '{ __typename }' },
        {
          next: (result) => resolve({ data: result.data }),
          error: (error) => resolve({ closeCode: (error as CloseEvent).code, closeReason: (error as CloseEvent).reason }),
          complete: () => undefined,
        },
      );
    });
  } finally {
    await client.dispose();
  }
}

const callerTrace = () => {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
};

const handshakeLines = (live: LiveServer) => live.logs().filter((l) => l.msg === 'request' && l.websocket === 'handshake');

describe('connection params', () => {
  it('are read as header names are, whatever their case', async () => {
    server = await startLiveServer();
    for (const params of [{ 'X-API-Key': API_KEY }, { 'X-Api-Key': API_KEY }] as Record<string, string>[]) {
      expect(await typename(wsClient(server.url, params))).toEqual({ data: { __typename: 'Query' } });
    }
  });

  it('that are no header value refuse the connection with 4403, as missing ones do, telling nothing of why', async () => {
    server = await startLiveServer();
    const refusals: Record<string, string>[] = [{ 'x-api-key': `${API_KEY}\nx` }, { 'x-api-key': 'Ā' }, { authorization: 'Bearer \u0000' }];
    for (const params of refusals) {
      expect(await typename(wsClient(server.url, params))).toEqual({ closeCode: 4403, closeReason: 'Forbidden' });
    }
    expect(server.sim.control.counters()).toMatchObject({ audit: 0, token: 0 });
    expect(server.logs().filter((l) => (l.level as number) >= 40)).toEqual([]);
  });

  it("carry the caller's trace context to the connection's handshake and operations", async () => {
    server = await startLiveServer();
    const caller = callerTrace();
    const params = { 'x-api-key': API_KEY, traceparent: caller.traceparent };
    expect(await typename(wsClient(server.url, params))).toEqual({ data: { __typename: 'Query' } });
    await vi.waitFor(() => expect(handshakeLines(server!)).toHaveLength(1));
    expect(handshakeLines(server)[0]).toMatchObject({ trace_id: caller.traceId });
  });

  it("take the trace context from the upgrade request's headers when the params have none", async () => {
    server = await startLiveServer();
    const caller = callerTrace();
    class TracedWebSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers: { traceparent: caller.traceparent } });
      }
    }
    const client = createClient({
      url: server.url.replace(/^http/, 'ws'),
      webSocketImpl: TracedWebSocket,
      connectionParams: { 'x-api-key': API_KEY },
      retryAttempts: 0,
      lazy: true,
    });
    expect(await typename(client)).toEqual({ data: { __typename: 'Query' } });
    await vi.waitFor(() => expect(handshakeLines(server!)).toHaveLength(1));
    expect(handshakeLines(server)[0]).toMatchObject({ trace_id: caller.traceId });
  });
});
