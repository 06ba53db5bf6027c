/**
 * How records flow to clients that read at different speeds: catch-up reads of clients that leave
 * at once, a replay of a busy window to a client that reads it, and clients that stop reading.
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, LIVE_QUERY, registered, sleep, startLiveServer, subscribeSse, subscribeWs, type LiveServer } from './live-server.js';
import { openRawWs, stalledSse, stalledWs } from './raw-clients.js';

let server: LiveServer | undefined;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await server?.close();
  server = undefined;
});

async function until(test: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${what}`);
    await sleep(20);
  }
}

/** Inserts `count` records of `objectType`, one per millisecond-distinct time, spread over [from, to). */
function insertSpread(live: LiveServer, count: number, objectType: string, from: number, to: number): string[] {
  const step = (to - from) / count;
  return Array.from({ length: count }, (_, i) => live.sim.control.insertEvents(1, { objectType, timestamp: Math.floor(from + i * step) })[0]!.uuid);
}

describe('catch-up reads', () => {
  it('stop when their subscription is completed at once: few upstream calls, none queued ahead of a query', async () => {
    // Room for all 300 at once: what one connection may run at once is test/live/websocket-limits.test.ts's.
    server = await startLiveServer({ env: { UPSTREAM_MAX_CONNECTIONS: '8' }, executionLimits: { perConnection: 1000, total: 1000 } });
    const live = server;
    live.sim.control.setLatency(200, 'audit');
    const query = async () => {
      const response = await fetch(live.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({ query: '{ auditEvents(first: 5) { edges { cursor } } }' }),
      });
      expect(response.status).toBe(200);
      expect((await response.json()) as object).not.toHaveProperty('errors');
    };
    await query();
    const { socket } = await openRawWs(live.url);
    cleanups.push(() => socket.close());
    const before = live.sim.control.counters().audit;
    const since = new Date(Date.now() - 14 * 60_000).toISOString();
    const churn = 300;
    for (let i = 0; i < churn; i++) {
      socket.send(JSON.stringify({ id: `c${i}`, type: 'subscribe', payload: { query: LIVE_QUERY, variables: { since } } }));
      socket.send(JSON.stringify({ id: `c${i}`, type: 'complete' }));
    }
    await until(() => live.liveAudit.stats().started === churn && live.liveAudit.stats().subscriptions === 0, 20_000, 'churn');

    // Unbounded, 300 reads of 200 ms each queue on 8 connections ahead of the query: by its answer,
    // the simulator has served them all.
    await query();
    expect(live.sim.control.counters().audit - before).toBeLessThan(30);
  }, 40_000);
});

describe.each([
  ['SSE', subscribeSse],
  ['WebSocket', subscribeWs],
])('a replay of a busy window over %s', (_transport, subscribe) => {
  it('is delivered whole to a client that reads it, then the live records', async () => {
    // A window four times what a client may be behind, over several upstream pages.
    const maxBuffered = 100;
    server = await startLiveServer({ maxBuffered, pageSize: 100 });
    const live = server;
    const now = Date.now();
    const replayed = insertSpread(live, 4 * maxBuffered, 'Busy', now - 120_000, now - 10_000);
    const sub = await registered(live, () => subscribe(live.url, { filter: { objectType: 'Busy' }, since: new Date(now - 180_000).toISOString() }));
    cleanups.push(() => sub.stop());
    // New records keep arriving while the client reads the replay: one each time it has read 20 more.
    const arrived: string[] = [];
    for (let i = 0; i < 20; i++) {
      arrived.push(...live.sim.control.insertEvents(1, { objectType: 'Busy' }).map((r) => r.uuid));
      await sub.received.until((r) => r.uuids.length >= Math.min(replayed.length, (i + 1) * 20) || r.done, 30_000);
    }
    await sub.received.until((r) => r.uuids.length >= replayed.length + arrived.length || r.done, 30_000);
    expect(sub.received.errors).toEqual([]);
    expect(sub.received.uuids.slice(0, replayed.length)).toEqual(replayed);
    expect(sub.received.uuids.slice(replayed.length).sort()).toEqual([...arrived].sort());
  }, 60_000);
});

describe.each([
  ['SSE', async (url: string, variables: object) => stalledSse(url, variables)],
  ['WebSocket', stalledWs],
])('a client that stops reading over %s', (_transport, stalled) => {
  it('is cut off: its slot is free again at once, and its connection is ended', async () => {
    const serverSockets: Socket[] = [];
    server = await startLiveServer({ stallMs: 300, endGraceMs: 100, onConnection: (socket) => void serverSockets.push(socket) });
    const live = server;
    const now = Date.now();
    // Tokens of 128 digests make each record about 2 KB: 6 MB, more than the sockets' buffers hold for a
    // client that reads nothing (Linux lets a socket's send buffer grow to 4 MB by default).
    insertSpread(live, 3000, 'Stall', now - 100_000, now - 1000);
    const client = await registered(live, () => stalled(live.url, { filter: { objectType: 'Stall' }, since: new Date(now - 120_000).toISOString() }));
    cleanups.push(() => client.destroy());
    // Found while open: a destroyed socket no longer knows its peer.
    const serverSide = serverSockets.find((s) => s.remotePort === client.localPort);
    expect(serverSide).toBeDefined();

    await until(() => live.liveAudit.stats().subscriptions === 0, 20_000, 'slot freed');
    await until(() => serverSide!.destroyed, 5_000, 'connection ended');
    expect(live.liveAudit.stats().pollers).toEqual([]);
  }, 40_000);
});
