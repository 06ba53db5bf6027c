/**
 * SIGTERM with open live streams, on the real process (src/index.ts): SSE streams end with
 * `complete`, WebSocket subscriptions get `complete` and then close 1001, and the process exits 0.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runGateway, type GatewayProcess } from '../helpers/process.js';
import { simulatorEnv } from '../helpers/simulator-env.js';
import { API_KEY, LIVE_QUERY, Received, sleep, type LivePayload } from './live-server.js';

let sim: Simulator;
let gateway: GatewayProcess;

beforeAll(async () => {
  sim = await startSimulator({ eventCount: 100 });
  gateway = runGateway({
    ...simulatorEnv(sim),
    GATEWAY_API_KEYS: API_KEY,
    AUDIT_LIVE_POLL_MS: '50',
    SHUTDOWN_GRACE_MS: '5000',
    LOG_LEVEL: 'info',
  });
});
afterAll(async () => {
  await gateway?.stop('SIGKILL');
  await sim?.close();
});

it('ends open SSE and WebSocket streams cleanly on SIGTERM and exits 0 within the grace period', async () => {
  const base = await gateway.ready;

  const sse = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': API_KEY },
    body: JSON.stringify({ query: LIVE_QUERY }),
  });
  expect(sse.status).toBe(200);
  const sseText = sse.text();

  const closes: number[] = [];
  const client = createClient({
    url: `${base.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { 'x-api-key': API_KEY },
    lazy: false,
    retryAttempts: 0,
    on: { closed: (event) => void closes.push((event as { code: number }).code) },
  });
  const ws = new Received(client.iterate({ query: LIVE_QUERY }) as AsyncIterableIterator<LivePayload>);

  // Both streams deliver before the signal (new records until the WebSocket has seen one).
  const inserted: string[] = [];
  for (let i = 0; i < 50 && ws.uuids.length === 0; i++) {
    inserted.push(sim.control.insertEvents(1)[0]!.uuid);
    await sleep(100);
  }
  await ws.until((r) => r.uuids.length > 0);
  await sleep(100);

  gateway.child.kill('SIGTERM');
  const body = await sseText;
  expect(body).toContain(inserted.at(-1));
  expect(body.trimEnd().endsWith('event: complete\ndata:')).toBe(true);

  await ws.until((r) => r.done);
  expect(ws.failure).toBeUndefined();
  expect(ws.uuids).toContain(inserted.at(-1));
  expect(await gateway.exited()).toBe(0);
  expect(closes).toEqual([1001]);
  await client.dispose();
}, 20_000);
