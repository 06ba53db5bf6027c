/**
 * resumeAfter and since: a new connection continues right after the last record received, late
 * records included, nothing lost or repeated; since replays up to 15 minutes, then goes live.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registered, startLiveServer, subscribeSse, subscribeWs, sleep, type LiveServer } from './live-server.js';

let server: LiveServer;

beforeAll(async () => {
  server = await startLiveServer();
});
afterAll(() => server?.close());

const filter = (objectType: string) => ({ filter: { objectType } });

describe('resumeAfter', () => {
  it('continues on a new connection right after the last record received, missing nothing in between', async () => {
    const first = await registered(server, () => subscribeSse(server.url, filter('User')));
    const start = Date.now();
    const before = server.sim.control.insertEvents(3, { objectType: 'User', timestamp: start + 300 }).map((r) => r.uuid);
    await first.received.until((r) => r.uuids.length >= 3);
    const token = first.received.lastToken;
    await first.stop();

    // While nobody listens: new records, and one stamped before those already delivered (late).
    const meanwhile = server.sim.control.insertEvents(2, { objectType: 'User' }).map((r) => r.uuid);
    const late = server.sim.control.insertEvents(1, { objectType: 'User', timestamp: start + 100 }).map((r) => r.uuid);
    await sleep(50);

    const second = await registered(server, () => subscribeWs(server.url, { resumeAfter: token }));
    await second.received.until((r) => r.uuids.length >= 3);
    const after = server.sim.control.insertEvents(2, { objectType: 'User' }).map((r) => r.uuid);
    await second.received.until((r) => r.uuids.length >= 5);
    await sleep(200);
    expect(second.received.errors).toEqual([]);
    expect(second.received.uuids.sort()).toEqual([...meanwhile, ...late, ...after].sort());
    expect(second.received.uuids).not.toContain(before[0]);
    await second.stop();
  });

  it('resumes from a record in the middle of a poll: the rest of that poll comes next', async () => {
    const first = await registered(server, () => subscribeWs(server.url, filter('Application')));
    await sleep(20);
    const burst = server.sim.control.insertEvents(5, { objectType: 'Application' });
    await first.received.until((r) => r.uuids.length >= 5);
    const delivered = first.received.uuids;
    const middleToken = first.received.payloads[1]!.data!.auditEventAdded.resumeAfter;
    await first.stop();

    const second = await registered(server, () => subscribeSse(server.url, { ...filter('Application'), resumeAfter: middleToken }));
    await second.received.until((r) => r.uuids.length >= 3);
    await sleep(200);
    expect(second.received.uuids).toEqual(delivered.slice(2));
    expect(burst).toHaveLength(5);
    await second.stop();
  });

  it('refuses a malformed token, a token of another filter, and since with resumeAfter', async () => {
    const first = await registered(server, () => subscribeSse(server.url, filter('OAuth2Client')));
    await sleep(20);
    server.sim.control.insertEvents(1, { objectType: 'OAuth2Client' });
    await first.received.until((r) => r.uuids.length >= 1);
    const token = first.received.lastToken;
    await first.stop();

    const cases = [
      { resumeAfter: 'not-a-token' },
      { resumeAfter: `${token.slice(0, -4)}` },
      { ...filter('LOGIN'), resumeAfter: token },
      { since: new Date().toISOString(), resumeAfter: token },
    ];
    for (const variables of cases) {
      const sub = subscribeSse(server.url, variables);
      await sub.received.until((r) => r.done);
      expect(sub.received.errors.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
      expect(sub.received.uuids).toEqual([]);
    }
  });
});

describe('since', () => {
  it('replays the records since that time, oldest first, then continues live without repeats', async () => {
    const now = Date.now();
    const old = server.sim.control.insertEvents(1, { objectType: 'LOGOUT', timestamp: now - 10 * 60_000 });
    const recent = [
      ...server.sim.control.insertEvents(2, { objectType: 'LOGOUT', timestamp: now - 5 * 60_000 }),
      ...server.sim.control.insertEvents(2, { objectType: 'LOGOUT', timestamp: now - 60_000 }),
    ];
    const sub = await registered(server, () =>
      subscribeWs(server.url, { ...filter('LOGOUT'), since: new Date(now - 6 * 60_000).toISOString() }),
    );
    await sub.received.until((r) => r.uuids.length >= 4);
    const live = server.sim.control.insertEvents(2, { objectType: 'LOGOUT' });
    await sub.received.until((r) => r.uuids.length >= 6);
    await sleep(200);
    const replayed = sub.received.nodes.slice(0, 4);
    expect(replayed.map((n) => n.timestamp)).toEqual([...replayed.map((n) => n.timestamp)].sort());
    expect(sub.received.uuids.slice(0, 4).sort()).toEqual(recent.map((r) => r.uuid).sort());
    expect(sub.received.uuids.slice(4).sort()).toEqual(live.map((r) => r.uuid).sort());
    expect(sub.received.uuids).not.toContain(old[0]!.uuid);
    await sub.stop();
  });

  it('refuses a time more than 15 minutes back', async () => {
    const sub = subscribeSse(server.url, { since: new Date(Date.now() - 16 * 60_000).toISOString() });
    await sub.received.until((r) => r.done);
    expect(sub.received.errors.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
  });
});
