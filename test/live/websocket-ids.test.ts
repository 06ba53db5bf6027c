/**
 * A WebSocket client that reuses a subscription id as soon as it has completed it, which the
 * graphql-transport-ws protocol allows, while the gateway is still setting the first one up: every
 * stream the gateway starts ends with its subscription, its successor, or its socket.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { LIVE_QUERY, sleep, startLiveServer, type LiveServer } from './live-server.js';
import { openRawWs as rawSocket } from './raw-clients.js';

let server: LiveServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const subscribe = (socket: WebSocket, id: string) =>
  socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: LIVE_QUERY } }));
const complete = (socket: WebSocket, id: string) => socket.send(JSON.stringify({ id, type: 'complete' }));

async function until(test: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await sleep(10);
  }
}

describe('a subscription id reused right after its complete', () => {
  it('keeps one stream per id while the socket is open, and none once it closes', async () => {
    server = await startLiveServer();
    const live = server;
    const { socket, messages } = await rawSocket(live.url);
    const ids = Array.from({ length: 20 }, (_, i) => `a${i}`);
    for (const id of ids) {
      for (let i = 0; i < 10; i++) {
        subscribe(socket, id);
        complete(socket, id);
      }
      subscribe(socket, id);
    }
    await until(() => live.liveAudit.stats().subscriptions >= ids.length);
    // Two polls after the last subscribe: the one under way then has ended, a whole one has run since.
    const polls = () => live.liveAudit.stats().pollers.reduce((sum, poller) => sum + poller.polls, 0);
    const pollsBefore = polls();
    await until(() => polls() >= pollsBefore + 2);
    live.sim.control.insertEvents(1);
    const delivered = () => new Set(messages.filter((m) => m.type === 'next').map((m) => m.id));
    await until(() => ids.every((id) => delivered().has(id)));
    await sleep(200);

    expect(live.liveAudit.stats().subscriptions).toBe(ids.length);
    // The completed subscriptions stay silent: nothing arrives for an id but its live successor.
    expect(messages.filter((m) => m.type === 'complete' || m.type === 'error')).toEqual([]);
    expect(messages.filter((m) => m.type === 'next')).toHaveLength(ids.length);

    socket.close();
    await until(() => live.liveAudit.stats().subscriptions === 0 && live.liveAudit.stats().pollers.length === 0);
    // One access line per subscribe message, those completed while being set up included.
    const accessLines = () => live.logs().filter((l) => l.msg === 'websocket operation');
    await until(() => accessLines().length >= ids.length * 11);
    await sleep(100);
    for (const id of ids) {
      const ends = accessLines()
        .filter((l) => l.operationId === id)
        .map((l) => l.end);
      expect(ends.sort()).toEqual([...Array<string>(10).fill('complete'), 'socket closed']);
    }
    expect(accessLines()).toHaveLength(ids.length * 11);
  });

  it('ends every stream of a socket closed in the middle of such a burst', async () => {
    server = await startLiveServer();
    const live = server;
    for (let round = 0; round < 5; round++) {
      const { socket } = await rawSocket(live.url);
      for (let i = 0; i < 20; i++) {
        subscribe(socket, 'a');
        complete(socket, 'a');
        subscribe(socket, `b${i}`);
      }
      subscribe(socket, 'a');
      await sleep(round * 20);
      socket.close();
    }
    await until(() => live.liveAudit.stats().started > 0);
    await sleep(500);
    await until(() => live.liveAudit.stats().subscriptions === 0 && live.liveAudit.stats().pollers.length === 0);
  });

  it('closes the socket with 4409 for a subscribe whose id is still active, as graphql-ws does', async () => {
    server = await startLiveServer();
    const live = server;
    const { socket } = await rawSocket(live.url);
    const closed = new Promise<number>((resolve) => socket.once('close', resolve));
    subscribe(socket, 'a');
    await until(() => live.liveAudit.stats().subscriptions === 1);
    subscribe(socket, 'a');
    expect(await closed).toBe(4409);
    await until(() => live.liveAudit.stats().subscriptions === 0);
  });
});
