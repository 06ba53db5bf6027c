import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, SESSION_IDS, startSimulator, type AuditRecordData, type Simulator } from '../../simulator/index.js';
import {
  auditRequest,
  basic,
  control,
  demoSession,
  demoToken,
  filesRequest,
  manualClock,
  rowUuids,
  tokenRequest,
  type AuditBody,
} from '../helpers/simulator-client.js';

const clock = manualClock();
let sim: Simulator;
let token: string;
let session: string;

beforeAll(async () => {
  sim = await startSimulator({ now: clock.now, eventCount: 500 });
  token = (await demoToken(sim)).access_token;
  session = await demoSession(sim);
});
afterAll(() => sim.close());

const ok = { ok: true };

describe('HTTP control surface', () => {
  it('fail-next, then reset', async () => {
    expect((await control(sim, 'fail-next', { count: 1, status: 503, route: 'audit', retryAfterSeconds: 2 })).json).toEqual(ok);
    const failed = await auditRequest(sim, token);
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('2');
    await control(sim, 'fail-next', { count: 5, status: 500 });
    expect((await control(sim, 'reset', {})).json).toEqual(ok);
    expect((await auditRequest(sim, token, { pageSize: 1 })).status).toBe(200);
    expect((await control(sim, 'counters')).json).toMatchObject({ audit: 1, byStatus: { '200': 1 } });
  });

  it('latency', async () => {
    await control(sim, 'latency', { ms: 200, route: 'files' });
    const started = performance.now();
    await filesRequest(sim, session, SESSION_IDS.empty);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    await control(sim, 'latency', { ms: 0 });
  });

  it('malform-next', async () => {
    await control(sim, 'malform-next', { route: 'files', kind: 'truncated' });
    const res = await filesRequest(sim, session, SESSION_IDS.mixed);
    expect(res.status).toBe(200);
    expect(res.json).toBeUndefined();
  });

  it('expire-tokens, token-lifetime and refuse-refresh', async () => {
    const auth = { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) };
    const issued = (await tokenRequest(sim, { grant_type: 'client_credentials' }, auth)).json as { refresh_token: string };
    await control(sim, 'expire-tokens', {});
    expect((await auditRequest(sim, token)).status).toBe(401);
    await control(sim, 'token-lifetime', { seconds: 30 });
    await control(sim, 'refuse-refresh', { count: 1 });
    const refused = await tokenRequest(sim, { grant_type: 'refresh_token', refresh_token: issued.refresh_token }, auth);
    expect(refused.json).toMatchObject({ error: 'invalid_grant' });
    const fresh = await tokenRequest(sim, { grant_type: 'refresh_token', refresh_token: issued.refresh_token }, auth);
    expect(fresh.json).toMatchObject({ expires_in: 30 });
    await control(sim, 'clear-faults', {});
    token = (await demoToken(sim)).access_token;
    await control(sim, 'expire-tokens', { refreshTokensToo: true });
    token = (await demoToken(sim)).access_token;
  });

  it('expire-sessions', async () => {
    await control(sim, 'expire-sessions', {});
    expect((await filesRequest(sim, session, SESSION_IDS.empty)).status).toBe(401);
    session = await demoSession(sim);
  });

  it('insert-events, events and corrupt-event', async () => {
    const inserted = (await control(sim, 'insert-events', { count: 2, objectType: 'LOGIN' })).json as { events: AuditRecordData[] };
    expect(inserted.events).toHaveLength(2);
    const page = (await auditRequest(sim, token, { pageSize: 2 })).json as AuditBody;
    expect(rowUuids(page)).toEqual(inserted.events.map((e) => e.uuid));

    const listed = (await control(sim, 'events?objectType=LOGIN')).json as { events: AuditRecordData[] };
    expect(listed.events.slice(0, 2).map((e) => e.uuid)).toEqual(inserted.events.map((e) => e.uuid));
    expect(listed.events.every((e) => e.objectType === 'LOGIN')).toBe(true);
    expect(listed.events).toEqual(sim.control.events({ objectType: 'LOGIN' }));

    const uuid = inserted.events[0]!.uuid;
    expect((await control(sim, 'corrupt-event', { uuid })).json).toEqual(ok);
    const after = (await auditRequest(sim, token, { pageSize: 1 })).json as AuditBody;
    expect(() => JSON.parse(after.data[0]![4]) as unknown).toThrow();
    expect((await control(sim, 'corrupt-event', { uuid: 'unknown' })).status).toBe(404);
  });

  it('sessions', async () => {
    const res = (await control(sim, 'sessions')).json as { sessions: { id: string }[] };
    expect(res.sessions.map((s) => s.id)).toContain(SESSION_IDS.unknownStatus);
  });

  it('reset-counters; control calls themselves are not counted', async () => {
    await control(sim, 'reset-counters', {});
    await control(sim, 'counters');
    await control(sim, 'sessions');
    expect((await control(sim, 'counters')).json).toEqual(sim.control.counters());
    expect(sim.control.counters()).toMatchObject({ token: 0, audit: 0, files: 0, session: 0, byStatus: {} });
  });

  it.each([
    ['fail-next', { count: 1 }],
    ['fail-next', { count: 1, status: 42 }],
    ['fail-next', { count: -1, status: 500 }],
    ['latency', { ms: -1 }],
    ['malform-next', { route: 'nowhere' }],
    ['token-lifetime', { seconds: 1.5 }],
    ['insert-events', { count: 'many' }],
    ['corrupt-event', {}],
  ])('answers 400 to %s %o', async (path, body) => {
    const res = await control(sim, path, body);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: expect.any(String) });
  });

  it('answers 400 to a body that is not JSON, 404 to an unknown operation', async () => {
    const bad = await fetch(`${sim.url}/__simulator/fail-next`, { method: 'POST', body: '{nope', signal: AbortSignal.timeout(2000) });
    expect(bad.status).toBe(400);
    await bad.text();
    expect((await control(sim, 'explode', {})).status).toBe(404);
    expect((await control(sim, 'events?fromMillis=soon')).status).toBe(400);
  });
});
