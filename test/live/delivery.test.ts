/**
 * auditEventAdded over SSE (graphql-sse) and WebSocket (graphql-ws) against the simulator:
 * exactly once and oldest first across bursts, filters, late records, resume and since.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, LIVE_QUERY, registered, startLiveServer, subscribeSse, subscribeWs, sleep, type LiveServer } from './live-server.js';

let server: LiveServer;

beforeAll(async () => {
  server = await startLiveServer();
});
afterAll(() => server?.close());

const sortedOldestFirst = (nodes: { uuid: string; timestamp: string }[]) =>
  [...nodes].sort((a, b) => a.timestamp.localeCompare(b.timestamp) || (a.uuid < b.uuid ? -1 : 1));

describe.each([
  ['SSE', subscribeSse],
  ['WebSocket', subscribeWs],
])('auditEventAdded over %s', (_transport, subscribe) => {
  it('delivers every record of several bursts exactly once, oldest first within a poll', async () => {
    const sub = await registered(server, () => subscribe(server.url));
    await sleep(20);
    const inserted: string[] = [];
    for (let burst = 0; burst < 3; burst++) {
      const now = Date.now();
      // Several records on one millisecond, and some a little older: ties and order within a poll.
      inserted.push(...server.sim.control.insertEvents(5, { timestamp: now }).map((r) => r.uuid));
      inserted.push(...server.sim.control.insertEvents(3, { timestamp: now - 7 }).map((r) => r.uuid));
      await sleep(120);
    }
    await sub.received.until((r) => r.uuids.length >= inserted.length);
    await sleep(200);
    expect(sub.received.errors).toEqual([]);
    expect(sub.received.uuids.sort()).toEqual([...inserted].sort());
    expect(new Set(sub.received.uuids).size).toBe(sub.received.uuids.length);
    await sub.stop();
  });
});

describe('auditEventAdded over a plain text/event-stream GET', () => {
  it('streams records as SSE `next` events', async () => {
    const abort = new AbortController();
    const url = `${server.url}?query=${encodeURIComponent(LIVE_QUERY)}&variables=${encodeURIComponent('{"filter":{"objectType":"LOGIN_ERROR"}}')}`;
    const response = await registered(server, () =>
      fetch(url, { headers: { accept: 'text/event-stream', 'x-api-key': API_KEY }, signal: abort.signal }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    await sleep(20);
    const [record] = server.sim.control.insertEvents(1, { objectType: 'LOGIN_ERROR' });
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes(record!.uuid)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    expect(text).toMatch(new RegExp(`event: next\ndata: .*${record!.uuid}`));
    abort.abort();
  });
});

describe('auditEventAdded semantics', () => {
  it('orders the records of one poll by timestamp, then uuid', async () => {
    const sub = await registered(server, () => subscribeSse(server.url, { filter: { objectType: 'Tenant' } }));
    const now = Date.now();
    server.sim.control.insertEvents(4, { timestamp: now + 100, objectType: 'Tenant' });
    server.sim.control.insertEvents(4, { timestamp: now + 50, objectType: 'Tenant' });
    await sub.received.until((r) => r.uuids.length >= 8);
    expect(sub.received.nodes).toEqual(sortedOldestFirst(sub.received.nodes));
    await sub.stop();
  });

  it('delivers only the records of its filter', async () => {
    const groups = await registered(server, () => subscribeWs(server.url, { filter: { objectType: 'Group' } }));
    const logins = await registered(server, () => subscribeSse(server.url, { filter: { objectType: 'LOGIN' } }));
    const group = server.sim.control.insertEvents(3, { objectType: 'Group' }).map((r) => r.uuid);
    const login = server.sim.control.insertEvents(2, { objectType: 'LOGIN' }).map((r) => r.uuid);
    server.sim.control.insertEvents(2, { objectType: 'LAUNCH' });
    await groups.received.until((r) => r.uuids.length >= 3);
    await logins.received.until((r) => r.uuids.length >= 2);
    await sleep(200);
    expect(groups.received.uuids.sort()).toEqual(group.sort());
    expect(logins.received.uuids.sort()).toEqual(login.sort());
    expect(groups.received.nodes.every((n) => n.objectType === 'Group')).toBe(true);
    await Promise.all([groups.stop(), logins.stop()]);
  });

  it('filters by action', async () => {
    const sub = await registered(server, () => subscribeSse(server.url, { filter: { objectType: 'Group', action: 'DELETE' } }));
    const groups = server.sim.control.insertEvents(30, { objectType: 'Group' });
    const deletes = groups.filter((r) => r.objectAction === 'DELETE').map((r) => r.uuid);
    expect(deletes.length).toBeGreaterThan(0);
    await sub.received.until((r) => r.uuids.length >= deletes.length);
    await sleep(200);
    expect(sub.received.uuids.sort()).toEqual(deletes.sort());
    await sub.stop();
  });

  it('delivers a record ingested late (stamped before records already delivered), once', async () => {
    const sub = await registered(server, () => subscribeWs(server.url));
    const start = Date.now();
    const first = server.sim.control.insertEvents(2, { timestamp: start + 1000 });
    await sub.received.until((r) => r.uuids.length >= 2);
    // Stamped before the delivered ones, within the settle time: ingested late.
    const late = server.sim.control.insertEvents(1, { timestamp: start + 500 });
    await sub.received.until((r) => r.uuids.length >= 3);
    await sleep(200);
    expect(sub.received.uuids).toEqual([...first.map((r) => r.uuid).sort(), late[0]!.uuid]);
    await sub.stop();
  });

  it('does not deliver records stamped before it started', async () => {
    const sub = await registered(server, () => subscribeSse(server.url, { filter: { objectType: 'RuleSet' } }));
    server.sim.control.insertEvents(2, { objectType: 'RuleSet', timestamp: Date.now() - 60_000 });
    const fresh = server.sim.control.insertEvents(1, { objectType: 'RuleSet' });
    await sub.received.until((r) => r.uuids.length >= 1);
    await sleep(200);
    expect(sub.received.uuids).toEqual([fresh[0]!.uuid]);
    await sub.stop();
  });
});
