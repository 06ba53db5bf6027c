/** How records flow to clients: catch-up reads of clients that leave at once. */
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY, LIVE_QUERY, sleep, startLiveServer, type LiveServer } from './live-server.js';
import { openRawWs } from './raw-clients.js';

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

describe('catch-up reads', () => {
  it('stop when their subscription is completed at once: few upstream calls, and queries stay fast', async () => {
    server = await startLiveServer({ env: { UPSTREAM_MAX_CONNECTIONS: '8' } });
    const live = server;
    live.sim.control.setLatency(200, 'audit');
    const query = async () => {
      const started = Date.now();
      const response = await fetch(live.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({ query: '{ auditEvents(first: 5) { edges { cursor } } }' }),
      });
      expect(response.status).toBe(200);
      expect((await response.json()) as object).not.toHaveProperty('errors');
      return Date.now() - started;
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

    // Unbounded, 300 reads of 200 ms each queue on 8 connections for 7.5 s ahead of the query.
    expect(await query()).toBeLessThan(2000);
    expect(live.sim.control.counters().audit - before).toBeLessThan(30);
  }, 40_000);
});
