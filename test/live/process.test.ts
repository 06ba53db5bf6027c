/**
 * The real process (the production build of src/main.ts) in demo mode: the simulator keeps adding audit events, so the
 * GraphiQL example subscription moves on its own; SIGTERM then ends open SSE and WebSocket streams
 * cleanly (`complete`; WebSocket close 1001) and the process exits 0 within its grace period.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { exampleOperations } from '../../src/gateway/examples/index.js';
import { builtGateway } from '../helpers/built-gateway.js';
import { runGateway, type GatewayProcess } from '../helpers/process.js';
import { LIVE_QUERY, Received, sseClient, type LivePayload } from './live-server.js';

let gateway: GatewayProcess;
let base: string;

beforeAll(async () => {
  // No drain delay: the streams end at the signal whatever it is, and the exit need not wait for it.
  gateway = runGateway(
    { AUDIT_LIVE_POLL_MS: '50', DEMO_EVENT_INTERVAL_MS: '100', SHUTDOWN_GRACE_MS: '5000', SHUTDOWN_DELAY_MS: '0', LOG_LEVEL: 'info' },
    await builtGateway(),
  );
  base = await gateway.ready;
  // The start-up tests start gateways at the same time; on a busy machine this one waits its turn.
}, 90_000);
afterAll(async () => {
  await gateway?.stop('SIGKILL');
});

const liveExample = exampleOperations().find((op) => op.query.includes('auditEventAdded'))!;

it('offers the live subscription as a GraphiQL tab, and in demo mode its stream moves on its own', async () => {
  const page = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
  expect(await page.text()).toContain('LiveAuditRecords');

  const iterator = sseClient(`${base}/graphql`, {}).iterate({ query: liveExample.query }) as AsyncIterableIterator<LivePayload>;
  const received = new Received(iterator);
  await received.until((r) => r.uuids.length >= 3, 10_000);
  expect(received.errors).toEqual([]);
  expect(new Set(received.uuids).size).toBe(received.uuids.length);
  await iterator.return?.();
}, 20_000);

/** The value of an unlabelled series, or of one with these labels, in a scrape. */
const sample = (scrape: string, series: string) =>
  Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(scrape)?.[1] ?? Number.NaN);

it('shows its live subscriptions, pollers, deliveries and why subscriptions ended on /metrics', async () => {
  const scrape = async () => (await fetch(`${base}/metrics`)).text();
  /** The next scrape for which `test` holds, within 5 s. */
  const scrapeUntil = async (test: (scrape: string) => boolean) => {
    const deadline = Date.now() + 5000;
    let text = await scrape();
    while (!test(text) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      text = await scrape();
    }
    return text;
  };
  // The earlier test's stream ends when the server sees its client gone.
  const before = await scrapeUntil((text) => sample(text, 'gateway_live_subscriptions') === 0);
  expect(sample(before, 'gateway_live_pollers')).toBe(0);
  const iterator = sseClient(`${base}/graphql`, {}).iterate({ query: liveExample.query }) as AsyncIterableIterator<LivePayload>;
  const received = new Received(iterator);
  await received.until((r) => r.uuids.length >= 2, 10_000);
  const during = await scrape();
  expect(sample(during, 'gateway_live_subscriptions')).toBe(1);
  expect(sample(during, 'gateway_live_pollers')).toBe(1);
  const delivered = sample(during, 'gateway_live_records_delivered_total') - sample(before, 'gateway_live_records_delivered_total');
  expect(delivered).toBeGreaterThanOrEqual(2);
  // Records still on their way to the client are counted already; twice as many is no longer that.
  expect(delivered).toBeLessThan(2 * received.uuids.length);
  await iterator.return?.();
  const ended = 'gateway_live_subscriptions_ended_total{reason="client"}';
  const after = await scrapeUntil((text) => sample(text, ended) > sample(before, ended));
  expect(sample(after, ended) - sample(before, ended)).toBe(1);
  expect(sample(after, 'gateway_live_subscriptions')).toBe(0);
  expect(sample(after, 'gateway_live_pollers')).toBe(0);
  expect(sample(after, 'gateway_live_subscriptions_ended_total{reason="RATE_LIMITED"}')).toBe(0);
}, 20_000);

it('ends open SSE and WebSocket streams cleanly on SIGTERM and exits 0 within the grace period', async () => {
  const sse = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: LIVE_QUERY }),
  });
  expect(sse.status).toBe(200);
  const sseText = sse.text();

  const closes: number[] = [];
  const client = createClient({
    url: `${base.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    lazy: false,
    // The server closing the connection is what this test waits for, not an error to print.
    onNonLazyError: () => {},
    retryAttempts: 0,
    on: { closed: (event) => void closes.push((event as { code: number }).code) },
  });
  const ws = new Received(client.iterate({ query: LIVE_QUERY }) as AsyncIterableIterator<LivePayload>);
  // Both streams deliver before the signal.
  await ws.until((r) => r.uuids.length >= 2, 10_000);

  gateway.child.kill('SIGTERM');
  const body = await sseText;
  expect(body).toContain('event: next');
  expect(body.trimEnd().endsWith('event: complete\ndata:')).toBe(true);

  await ws.until((r) => r.done);
  expect(ws.failure).toBeUndefined();
  expect(await gateway.exited()).toBe(0);
  expect(closes).toEqual([1001]);
  await client.dispose();
}, 20_000);
