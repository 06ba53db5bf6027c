/**
 * Shared pollers, upstream faults, caller authentication, the subscription limit and slow
 * subscribers, counted in the simulator's own call counters.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LiveItem } from '../../src/audit/live/index.js';
import {
  API_KEY,
  LIVE_QUERY,
  registered,
  sleep,
  startLiveServer,
  subscribeSse,
  subscribeWs,
  type LiveServer,
} from './live-server.js';

let server: LiveServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function until(test: () => boolean, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await sleep(10);
  }
}

/** A raw SSE request, to see the HTTP status a client gets. */
function ssePost(url: string, headers: Record<string, string>, variables: Record<string, unknown> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query: LIVE_QUERY, variables }),
    signal: AbortSignal.timeout(3000),
  });
}

describe('one poller per filter', () => {
  it('serves any number of subscribers of one filter with the upstream calls of one poller', async () => {
    server = await startLiveServer();
    const live = server;
    const subs = await registered(
      live,
      () => Array.from({ length: 10 }, (_, i) => (i % 2 ? subscribeSse : subscribeWs)(live.url, { filter: { objectType: 'LOGIN' } })),
      10,
    );
    expect(live.liveAudit.stats().pollers).toEqual([{ filter: { objectType: 'LOGIN', action: undefined }, subscribers: 10, polls: expect.any(Number) }]);
    live.sim.control.resetCounters();
    const pollsBefore = live.liveAudit.stats().pollers[0]!.polls;
    await sleep(20);
    const inserted = live.sim.control.insertEvents(3, { objectType: 'LOGIN' }).map((r) => r.uuid);
    await Promise.all(subs.map((s) => s.received.until((r) => r.uuids.length >= 3)));
    const polls = live.liveAudit.stats().pollers[0]!.polls - pollsBefore;
    const auditCalls = live.sim.control.counters().audit;
    expect(polls).toBeGreaterThan(0);
    // Every poll is one upstream call, whatever the number of subscribers (give or take one in flight).
    expect(auditCalls).toBeGreaterThanOrEqual(polls - 1);
    expect(auditCalls).toBeLessThanOrEqual(polls + 1);
    for (const sub of subs) expect(sub.received.uuids.sort()).toEqual([...inserted].sort());

    // The last subscriber gone, polling stops.
    await Promise.all(subs.map((s) => s.stop()));
    await until(() => live.liveAudit.stats().pollers.length === 0);
    await sleep(60);
    live.sim.control.resetCounters();
    await sleep(300);
    expect(live.sim.control.counters().audit).toBe(0);
  });
});

describe('paging', () => {
  it('pages through a poll larger than one upstream page and delivers each record once, oldest first', async () => {
    server = await startLiveServer({ pageSize: 5 });
    const live = server;
    const sub = await registered(live, () => subscribeWs(live.url, { filter: { objectType: 'AppEntitlement' } }));
    await sleep(20);
    const base = Date.now() + 200;
    // One burst, stamped ahead so that a single poll reads all of it: 23 records over 5 pages.
    const inserted = Array.from({ length: 23 }, (_, i) =>
      live.sim.control.insertEvents(1, { objectType: 'AppEntitlement', timestamp: base + (i % 4) }),
    ).flat();
    live.sim.control.resetCounters();
    await sub.received.until((r) => r.uuids.length >= 23);
    await sleep(200);
    expect(live.sim.control.counters().audit).toBeGreaterThanOrEqual(5);
    expect(sub.received.uuids.sort()).toEqual(inserted.map((r) => r.uuid).sort());
    const times = sub.received.nodes.map((n) => n.timestamp);
    expect(times).toEqual([...times].sort());
    await sub.stop();
  });
});

describe('upstream faults', () => {
  it('keeps failures of a few polls invisible and delivers what came meanwhile', async () => {
    server = await startLiveServer();
    const live = server;
    const sub = await registered(live, () => subscribeSse(live.url, { filter: { objectType: 'Group' } }));
    await sleep(20);
    live.sim.control.failNext(4, 503, { route: 'audit' });
    const inserted = live.sim.control.insertEvents(2, { objectType: 'Group' }).map((r) => r.uuid);
    await sub.received.until((r) => r.uuids.length >= 2);
    expect(live.sim.control.counters().byStatus['503']).toBe(4);
    expect(sub.received.errors).toEqual([]);
    expect(sub.received.uuids.sort()).toEqual(inserted.sort());
    await sub.stop();
  });

  it.each([
    ['SSE', subscribeSse],
    ['WebSocket', subscribeWs],
  ])('ends the %s stream with the error code once the upstream has failed for AUDIT_LIVE_GIVE_UP_MS', async (_t, subscribe) => {
    // Long enough for more than one failed poll however slow each is on a busy machine.
    server = await startLiveServer({ env: { AUDIT_LIVE_GIVE_UP_MS: '1500' } });
    const live = server;
    const sub = await registered(live, () => subscribe(live.url));
    live.sim.control.failNext(1000, 503, { route: 'audit' });
    await sub.received.until((r) => r.done);
    expect(sub.received.errors.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(live.sim.control.counters().byStatus['503']).toBeGreaterThan(1);
  });
});

describe('caller authentication', () => {
  it('answers an SSE subscription without a valid key with HTTP 401, and calls no upstream', async () => {
    server = await startLiveServer();
    for (const headers of [{}, { 'x-api-key': 'wrong' }] as Record<string, string>[]) {
      const response = await ssePost(server.url, headers);
      expect(response.status).toBe(401);
      const body = await response.text();
      expect(body).toContain('UNAUTHENTICATED');
    }
    await sleep(100);
    expect(server.sim.control.counters()).toMatchObject({ audit: 0, token: 0 });
    expect(server.liveAudit.stats().started).toBe(0);
  });

  it('closes a WebSocket without a valid key with 4403, and calls no upstream', async () => {
    server = await startLiveServer();
    for (const params of [{}, { 'x-api-key': 'wrong' }, { authorization: 'Bearer not-a-jwt' }] as Record<string, string>[]) {
      const sub = subscribeWs(server.url, {}, params);
      await sub.received.until((r) => r.done);
      expect((sub.received.failure as { code?: number }).code).toBe(4403);
      await sub.client.dispose();
    }
    await sleep(100);
    expect(server.sim.control.counters()).toMatchObject({ audit: 0, token: 0 });
    expect(server.liveAudit.stats().started).toBe(0);
  });

  it('admits a WebSocket whose connectionParams carry the key', async () => {
    server = await startLiveServer();
    const live = server;
    const sub = await registered(live, () => subscribeWs(live.url, {}, { 'x-api-key': API_KEY }));
    await sleep(20);
    const [record] = live.sim.control.insertEvents(1);
    await sub.received.until((r) => r.uuids.length === 1);
    expect(sub.received.uuids).toEqual([record!.uuid]);
    await sub.stop();
  });
});

describe('limits', () => {
  it('refuses subscriptions beyond AUDIT_LIVE_MAX_SUBSCRIPTIONS with RATE_LIMITED (SSE: HTTP 429)', async () => {
    server = await startLiveServer({ env: { AUDIT_LIVE_MAX_SUBSCRIPTIONS: '2' } });
    const live = server;
    const open = await registered(live, () => [subscribeSse(live.url), subscribeWs(live.url)], 2);

    const refused = await ssePost(live.url, { 'x-api-key': API_KEY });
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain('RATE_LIMITED');

    const ws = subscribeWs(live.url);
    await ws.received.until((r) => r.done);
    const errors = ws.received.failure as { extensions?: { code?: string } }[];
    expect(errors.map((e) => e.extensions?.code)).toEqual(['RATE_LIMITED']);
    await ws.client.dispose();

    // A slot freed is a slot available again.
    await open[0]!.stop();
    await until(() => live.liveAudit.stats().subscriptions === 1);
    const again = await registered(live, () => subscribeSse(live.url));
    expect(live.liveAudit.stats().subscriptions).toBe(2);
    await Promise.all([again.stop(), open[1]!.stop()]);
  });

  it('lets one caller hold at most AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER, and other callers still subscribe', async () => {
    const otherKey = 'another-team-key';
    server = await startLiveServer({ env: { AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER: '2', GATEWAY_API_KEYS: `${API_KEY},${otherKey}` } });
    const live = server;
    const open = await registered(live, () => [subscribeSse(live.url), subscribeWs(live.url)], 2);

    const refused = await ssePost(live.url, { 'x-api-key': API_KEY });
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain('A caller may hold at most 2 live subscriptions');
    const ws = subscribeWs(live.url);
    await ws.received.until((r) => r.done);
    expect((ws.received.failure as { extensions?: { code?: string } }[]).map((e) => e.extensions?.code)).toEqual(['RATE_LIMITED']);
    await ws.client.dispose();

    const other = await registered(live, () => [subscribeSse(live.url, {}, { 'x-api-key': otherKey }), subscribeWs(live.url, {}, { 'x-api-key': otherKey })], 2);
    expect(live.liveAudit.stats().subscriptions).toBe(4);

    // A subscription ended gives its caller the slot back.
    await open[0]!.stop();
    await until(() => live.liveAudit.stats().subscriptions === 3);
    const again = await registered(live, () => subscribeSse(live.url));
    await Promise.all([again, open[1]!, ...other].map((s) => s.stop()));
  });

  it('polls at most AUDIT_LIVE_MAX_FILTERS distinct filters: a new filter beyond is RATE_LIMITED, a filter in use is not', async () => {
    server = await startLiveServer({ env: { AUDIT_LIVE_MAX_FILTERS: '2' } });
    const live = server;
    const open = await registered(
      live,
      () => [subscribeSse(live.url, { filter: { objectType: 'A' } }), subscribeWs(live.url, { filter: { objectType: 'B' } })],
      2,
    );
    const refused = await ssePost(live.url, { 'x-api-key': API_KEY }, { filter: { objectType: 'C' } });
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain('RATE_LIMITED');
    const sameFilter = await registered(live, () => subscribeWs(live.url, { filter: { objectType: 'B' } }));
    expect(live.liveAudit.stats().pollers).toHaveLength(2);
    await Promise.all([...open, sameFilter].map((s) => s.stop()));
  });

  it('holds no subscription for a subscription asked for as plain JSON (answered 406)', async () => {
    server = await startLiveServer({ env: { AUDIT_LIVE_MAX_SUBSCRIPTIONS: '1' } });
    for (let i = 0; i < 3; i++) {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({ query: LIVE_QUERY }),
      });
      expect(response.status).toBe(406);
      await response.text();
    }
    const live = server;
    await until(() => live.liveAudit.stats().subscriptions === 0);
    const sub = await registered(live, () => subscribeSse(live.url));
    await sleep(20);
    const [record] = live.sim.control.insertEvents(1);
    await sub.received.until((r) => r.uuids.length === 1);
    expect(sub.received.uuids).toEqual([record!.uuid]);
    await sub.stop();
  });

  it('disconnects a subscriber that does not keep up, with an error, instead of buffering without bound', async () => {
    server = await startLiveServer({ maxBuffered: 3 });
    const live = server;
    const stream = live.liveAudit.subscribe({ filter: { objectType: 'Tenant' } });
    const polls = () => live.liveAudit.stats().pollers[0]?.polls ?? 0;
    const subscribed = () => live.liveAudit.stats().subscriptions > 0;
    // Nobody reads the stream: poll after poll adds records to its queue, until it is cut off. Each
    // round waits for a whole poll after its insert, however slow the machine, so the records
    // arrive in several batches (the check runs before each batch).
    for (let round = 0; round < 10 && subscribed(); round++) {
      const before = polls();
      live.sim.control.insertEvents(2, { objectType: 'Tenant' });
      await until(() => polls() > before + 1 || !subscribed(), 10_000);
    }
    const items: LiveItem[] = [];
    for await (const item of stream) items.push(item);
    const last = items.at(-1)!;
    expect(last.error?.code).toBe('RATE_LIMITED');
    expect(items.filter((i) => !i.error).length).toBeLessThan(8);
    expect(server.liveAudit.stats().subscriptions).toBe(0);
  });
});
