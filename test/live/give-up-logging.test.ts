/**
 * A live poller giving up after AUDIT_LIVE_GIVE_UP_MS is the gateway working as designed: one
 * `warn` line says so, and the error that ends the streams is logged no more (no `error` line, no
 * "unexpected error" with a stack), over SSE and WebSocket alike.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { registered, startLiveServer, subscribeSse, subscribeWs, type LiveServer } from './live-server.js';

let server: LiveServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a live poller that gives up', { timeout: 20_000 }, () => {
  it.each([
    ['SSE', subscribeSse],
    ['WebSocket', subscribeWs],
  ])('is one warn line, over %s', async (_transport, subscribe) => {
    server = await startLiveServer({ env: { AUDIT_LIVE_GIVE_UP_MS: '300' } });
    const live = server;
    const subs = await registered(live, () => [subscribe(live.url), subscribe(live.url)], 2);
    live.sim.control.failNext(1000, 503, { route: 'audit' });
    for (const sub of subs) await sub.received.until((r) => r.done);
    for (const sub of subs) expect(sub.received.errors.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_UNAVAILABLE']);

    const lines = live.logs();
    expect(lines.filter((line) => (line['level'] as number) >= 50)).toEqual([]);
    expect(lines.filter((line) => line['msg'] === 'live audit poller gave up: upstream failing')).toEqual([
      expect.objectContaining({ level: 40, code: 'UPSTREAM_UNAVAILABLE' }),
    ]);
    // Each streams' error reaches the request's error log, which knows it was written already.
    expect(lines.filter((line) => line['msg'] === 'The identity service is unavailable.' && (line['level'] as number) > 20)).toEqual([]);
  });
});
