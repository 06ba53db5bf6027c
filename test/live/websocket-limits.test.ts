/**
 * What one WebSocket connection, and all of them together, may run at once: graphql-ws starts every
 * subscribe message it gets, so without a bound one connection could start operations without end
 * (20,000 small queries on one socket exhausted the heap). An operation ends with its socket, and
 * gives back a large operation's turn once its answer is sent.
 */
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, auditCalls, registered, startLiveServer, subscribeWs, type LiveServer } from './live-server.js';
import { RawConnections, sendSubscribe as subscribe, settledOperation as settled } from './raw-clients.js';

let server: LiveServer | undefined;
const connections = new RawConnections();
afterEach(async () => {
  connections.destroyAll();
  await server?.close();
  server = undefined;
});

const PAGE = '{ auditEvents(first: 3) { edges { cursor } } }';
const LARGE_PAGE = '{ auditEvents(first: 2000) { totalCount } }';
const connect = (live: LiveServer) => connections.open(live);

/** The data of a large page asked for over HTTP, which must come within `timeoutMs`. */
async function largePageOverHttp(live: LiveServer, timeoutMs: number): Promise<unknown> {
  const response = await fetch(live.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: JSON.stringify({ query: LARGE_PAGE }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return ((await response.json()) as { data?: unknown }).data;
}

describe('operations a WebSocket runs at once', () => {
  it('refuses a subscribe message past the connection\'s limit with RATE_LIMITED, keeps the connection, and runs one sent once another has finished', async () => {
    // The upstream holds the first two in flight until the third is refused.
    server = await startLiveServer({ executionLimits: { perConnection: 2, total: 100 }, holdIdentity: auditCalls });
    const socket = await connect(server);
    for (const id of ['a', 'b', 'c']) subscribe(socket, id, PAGE);

    expect(await settled(socket, 'c')).toEqual([
      {
        id: 'c',
        type: 'error',
        payload: [
          {
            message: 'A WebSocket connection runs at most 2 operations at once; send this one when another has finished.',
            extensions: { code: 'RATE_LIMITED' },
          },
        ],
      },
    ]);
    server.upstream!.release();
    for (const id of ['a', 'b']) expect((await settled(socket, id)).map((m) => m.type)).toEqual(['next', 'complete']);
    subscribe(socket, 'd', PAGE);
    expect((await settled(socket, 'd')).map((m) => m.type)).toEqual(['next', 'complete']);
    expect(socket.closed).toBe(false);
  });

  it('lets a connection run 64 operations at once by default', async () => {
    server = await startLiveServer({ holdIdentity: auditCalls });
    const socket = await connect(server);
    const ids = Array.from({ length: 65 }, (_, i) => String(i));
    for (const id of ids) subscribe(socket, id, PAGE);
    await settled(socket, '64');
    server.upstream!.release();
    const outcomes = await Promise.all(ids.map((id) => settled(socket, id)));
    expect(outcomes.slice(0, 64).every((messages) => messages.map((m) => m.type).join() === 'next,complete')).toBe(true);
    expect(outcomes[64]![0]).toMatchObject({ type: 'error', payload: [{ extensions: { code: 'RATE_LIMITED' } }] });
  });

  it('counts the operations of every connection against the total', async () => {
    server = await startLiveServer({ executionLimits: { perConnection: 5, total: 3 }, holdIdentity: auditCalls });
    const [first, second] = [await connect(server), await connect(server)];
    const sent = [[first, 'a'], [first, 'b'], [second, 'a'], [second, 'b']] as const;
    for (const [socket, id] of sent) subscribe(socket, id, PAGE);
    // While the upstream holds the others, only the one refused can end.
    await Promise.race(sent.map(([socket, id]) => settled(socket, id)));
    server.upstream!.release();
    const outcomes = await Promise.all(sent.map(([socket, id]) => settled(socket, id)));
    // Which one comes fourth depends on how the two sockets' messages interleave.
    const refused = outcomes.filter((messages) => messages[0]!.type === 'error');
    expect(refused).toHaveLength(1);
    expect(refused[0]![0]!.payload).toEqual([
      { message: 'The gateway is running too many WebSocket operations at once; retry later.', extensions: { code: 'RATE_LIMITED' } },
    ]);
    for (const messages of outcomes.filter((m) => m[0]!.type !== 'error')) expect(messages.map((m) => m.type)).toEqual(['next', 'complete']);
  });

  it('does not count a live subscription once it streams: queries still run beside it', async () => {
    server = await startLiveServer({ executionLimits: { perConnection: 1, total: 1 }, simulator: { newEventIntervalMs: 100 } });
    const live = await registered(server, () => subscribeWs(server!.url));
    try {
      // A second connection: the live one's socket is the graphql-ws client's own.
      const socket = await connect(server);
      subscribe(socket, 'q', PAGE);
      expect((await settled(socket, 'q')).map((m) => m.type)).toEqual(['next', 'complete']);
    } finally {
      await live.stop();
      await live.client.dispose();
    }
  });

  it('gives a large operation\'s turn back once its answer is sent, so large operations keep running over WebSocket and HTTP', async () => {
    server = await startLiveServer({ env: { LARGE_OPERATION_CONCURRENCY: '1' } });
    const socket = await connect(server);
    for (const id of ['1', '2', '3']) {
      subscribe(socket, id, LARGE_PAGE);
      expect((await settled(socket, id)).map((m) => m.type), `operation ${id}`).toEqual(['next', 'complete']);
    }
    expect(await largePageOverHttp(server, 10_000)).toMatchObject({ auditEvents: { totalCount: expect.any(Number) } });
  });

  it('ends an operation with its socket: its large operation\'s turn goes to the next one at once', async () => {
    // The upstream holds the first audit call (the held operation's) for as long as the test runs.
    let first = true;
    const firstAuditCall = (request: IncomingMessage) => auditCalls(request) && first && !(first = false);
    server = await startLiveServer({ env: { LARGE_OPERATION_CONCURRENCY: '1' }, holdIdentity: firstAuditCall });
    const live = server;
    const socket = await connect(live);
    subscribe(socket, 'held', LARGE_PAGE);
    await live.upstream!.held();
    socket.socket.destroy();
    // The held page never comes: the turn it held was given back when its socket closed.
    expect(await largePageOverHttp(live, 20_000)).toMatchObject({ auditEvents: { totalCount: expect.any(Number) } });
  });
});
