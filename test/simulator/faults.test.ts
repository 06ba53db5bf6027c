import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditRecordSchema, tokenResponseSchema } from '../../src/upstream/identity/schemas.js';
import { fileListSchema, sessionLoginSchema } from '../../src/upstream/content-library/schemas.js';
import { auditReportSchema, vapiErrorSchema } from '../helpers/upstream-shapes.js';
import { DEMO_CLIENT, DEMO_USER, SESSION_IDS, recordTimestamp, startSimulator, type Simulator } from '../../simulator/index.js';
import {
  FIXED_START,
  HOUR,
  auditRequest,
  basic,
  demoSession,
  demoToken,
  filesRequest,
  http,
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
  sim = await startSimulator({ now: clock.now, seed: 3, eventCount: 3000 });
  token = (await demoToken(sim)).access_token;
  session = await demoSession(sim);
});
afterEach(() => {
  sim.control.clearFaults();
  clock.set(FIXED_START);
});
afterAll(() => sim.close());

const audit = (params: Record<string, string | number> = { pageSize: 5 }) => auditRequest(sim, token, params);
const clientCredentials = () =>
  tokenRequest(sim, { grant_type: 'client_credentials' }, { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) });

describe('failNext', () => {
  it('fails the next calls of a route with the status and Retry-After, then recovers', async () => {
    sim.control.failNext(2, 429, { route: 'audit', retryAfterSeconds: 7 });
    for (let i = 0; i < 2; i++) {
      const res = await audit();
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('7');
      expect(res.json).toMatchObject({ error: expect.any(String) });
    }
    // Other routes are untouched while a route-specific failure is queued.
    sim.control.failNext(1, 503, { route: 'files' });
    expect((await clientCredentials()).status).toBe(200);
    expect((await audit()).status).toBe(200);
    const files = await filesRequest(sim, session, SESSION_IDS.empty);
    expect(files.status).toBe(503);
    expect(vapiErrorSchema.parse(files.json).type).toBe('com.vmware.vapi.std.errors.service_unavailable');
    expect((await filesRequest(sim, session, SESSION_IDS.empty)).status).toBe(200);
  });

  it('without a route fails whichever route is called next', async () => {
    sim.control.failNext(2, 500);
    const token = await clientCredentials();
    expect(token.status).toBe(500);
    expect(token.json).toMatchObject({ error: 'server_error' });
    expect((await filesRequest(sim, session, SESSION_IDS.empty)).status).toBe(500);
    expect((await clientCredentials()).status).toBe(200);
  });

  it('answers 502/504 as a load balancer would (HTML), 401 with the route’s own body', async () => {
    sim.control.failNext(1, 502, { route: 'audit' });
    const proxy = await audit();
    expect(proxy.status).toBe(502);
    expect(proxy.headers.get('content-type')).toMatch(/text\/html/);
    expect(proxy.json).toBeUndefined();
    sim.control.failNext(1, 401, { route: 'session' });
    const login = await demoSession(sim).catch((e: Error) => e.message);
    expect(login).toMatch(/401.*unauthenticated/);
  });

  it('applies before authentication: a valid call still gets the failure', async () => {
    sim.control.failNext(1, 503, { route: 'token', retryAfterSeconds: 1 });
    const res = await clientCredentials();
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.json).toMatchObject({ error: 'temporarily_unavailable' });
  });

  it('refuses nonsense', () => {
    expect(() => sim.control.failNext(-1, 500)).toThrow(RangeError);
    expect(() => sim.control.failNext(1, 99)).toThrow(RangeError);
  });
});

describe('latency', () => {
  it('delays one route only', async () => {
    sim.control.setLatency(250, 'audit');
    let started = performance.now();
    expect((await audit()).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
    started = performance.now();
    await filesRequest(sim, session, SESSION_IDS.empty);
    expect(performance.now() - started).toBeLessThan(200);
    sim.control.setLatency(0, 'audit');
    started = performance.now();
    await audit();
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('simulates a hung upstream that a client times out on, and close() still ends promptly', async () => {
    const hung = await startSimulator({ eventCount: 10 });
    // Far beyond setTimeout's 2^31 ms limit, which would otherwise fire at once.
    hung.control.setLatency(1e12);
    const pending = fetch(`${hung.url}/rest/com/vmware/cis/session`, { method: 'POST' });
    const outcome = await Promise.race([
      pending.then(() => 'answered', () => 'failed'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 300)),
    ]);
    expect(outcome).toBe('still waiting');
    const started = performance.now();
    await hung.close();
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(pending).rejects.toThrow();
  });

  it('a client abort releases the held answer without consuming a queued failure', async () => {
    sim.control.setLatency(5000, 'token');
    sim.control.failNext(1, 500, { route: 'token' });
    await expect(
      fetch(`${sim.url}/SAAS/auth/oauthtoken`, { method: 'POST', signal: AbortSignal.timeout(100) }),
    ).rejects.toThrow();
    sim.control.setLatency(0);
    expect((await clientCredentials()).status).toBe(500);
  });
});

describe('malformNext', () => {
  it('answers 200 with the wrong shape, then truncated JSON, then recovers', async () => {
    sim.control.malformNext('audit', 2);
    const shape = await audit();
    expect(shape.status).toBe(200);
    expect(shape.json).toEqual({ unexpected: true });
    expect(auditReportSchema.safeParse(shape.json).success).toBe(false);
    const truncated = await audit();
    expect(truncated.status).toBe(200);
    expect(() => JSON.parse(truncated.text) as unknown).toThrow();
    expect(auditReportSchema.safeParse((await audit()).json).success).toBe(true);
  });

  it('malforms every route, with a chosen kind', async () => {
    sim.control.malformNext('token', 1, { kind: 'truncated' });
    const token = await clientCredentials();
    expect(token.status).toBe(200);
    expect(tokenResponseSchema.safeParse(token.json).success).toBe(false);
    sim.control.malformNext('files');
    const files = await filesRequest(sim, session, SESSION_IDS.mixed);
    expect(files.status).toBe(200);
    expect(fileListSchema.safeParse(files.json).success).toBe(false);
    sim.control.malformNext('session');
    const login = await http(`${sim.url}/rest/com/vmware/cis/session`, {
      method: 'POST',
      headers: { authorization: basic(DEMO_USER.username, DEMO_USER.password) },
    });
    expect(login.status).toBe(200);
    expect(sessionLoginSchema.safeParse(login.json).success).toBe(false);
  });
});

describe('credentials', () => {
  it('expireTokens: access tokens die, refresh tokens survive unless refreshTokensToo', async () => {
    const first = (await clientCredentials()).json as { access_token: string; refresh_token: string };
    sim.control.expireTokens();
    expect((await auditRequest(sim, first.access_token)).status).toBe(401);
    const refreshed = await tokenRequest(
      sim,
      { grant_type: 'refresh_token', refresh_token: first.refresh_token },
      { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) },
    );
    expect(refreshed.status).toBe(200);
    const second = refreshed.json as { access_token: string; refresh_token: string };
    expect((await auditRequest(sim, second.access_token, { pageSize: 1 })).status).toBe(200);
    sim.control.expireTokens({ refreshTokensToo: true });
    const refused = await tokenRequest(
      sim,
      { grant_type: 'refresh_token', refresh_token: second.refresh_token },
      { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) },
    );
    expect(refused.json).toMatchObject({ error: 'invalid_grant' });
    token = (await demoToken(sim)).access_token;
  });

  it('refuseRefresh: the next refresh grants fail with invalid_grant, the token stays usable', async () => {
    const first = (await clientCredentials()).json as { refresh_token: string };
    sim.control.refuseRefresh(1);
    const refresh = () =>
      tokenRequest(sim, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) });
    const refused = await refresh();
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: 'invalid_grant' });
    expect((await refresh()).status).toBe(200);
  });

  it('expireSessions: every content library session gets 401', async () => {
    sim.control.expireSessions();
    expect((await filesRequest(sim, session, SESSION_IDS.empty)).status).toBe(401);
    session = await demoSession(sim);
    expect((await filesRequest(sim, session, SESSION_IDS.empty)).status).toBe(200);
  });
});

describe('audit data switches', () => {
  it('insertEvents: new events at now() come first, newest-first among themselves', async () => {
    clock.advance(1000);
    const inserted = sim.control.insertEvents(3, { objectType: 'Group' });
    expect(inserted).toHaveLength(3);
    expect(inserted.every((r) => r.objectType === 'Group' && r.baseType === 'Audit' && r.objectAction)).toBe(true);
    const body = (await audit({ pageSize: 3 })).json as AuditBody;
    expect(rowUuids(body)).toEqual(inserted.map((r) => r.uuid));
    expect(body.data[0]?.[0]).toBe(String(FIXED_START + 1000));
  });

  it('insertEvents: a given timestamp lands in order, an undocumented type is served as is', async () => {
    const at = FIXED_START - 5 * HOUR;
    const [event] = sim.control.insertEvents(1, { objectType: 'PASSWORD_RESET', timestamp: at });
    expect(event?.baseType).toBe('Action');
    const body = (await audit({ fromMillis: at, toMillis: at })).json as AuditBody;
    expect(rowUuids(body)).toContain(event?.uuid);
    const record = auditRecordSchema.parse(JSON.parse(body.data.find((r) => r[4].includes(event!.uuid))![4]));
    expect(record.objectType).toBe('PASSWORD_RESET');
    const truth = sim.control.events({ fromMillis: at - HOUR, toMillis: at + HOUR });
    expect(truth.map(recordTimestamp)).toEqual([...truth.map(recordTimestamp)].sort((a, b) => b - a));
  });

  it('corruptEvent: that row carries invalid JSON, the rest of the page is intact', async () => {
    const victim = sim.control.events()[2]!;
    sim.control.corruptEvent(victim.uuid);
    const body = (await audit({ pageSize: 10 })).json as AuditBody;
    expect(auditReportSchema.safeParse(body).success).toBe(true);
    const broken = body.data.filter((row) => {
      try {
        JSON.parse(row[4]);
        return false;
      } catch {
        return true;
      }
    });
    expect(broken).toHaveLength(1);
    expect(broken[0]?.[4]).toContain(victim.uuid);
    expect(broken[0]?.[0]).toBe(String(recordTimestamp(victim)));
    expect(() => sim.control.corruptEvent('no-such-uuid')).toThrow(RangeError);
  });
});

describe('counters', () => {
  it('counts calls by route, grant and status, and resets', async () => {
    sim.control.resetCounters();
    await clientCredentials();
    await tokenRequest(sim, {}, { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) }, '?grant_type=refresh_token');
    await auditRequest(sim, 'bogus');
    await audit();
    await filesRequest(sim, undefined, SESSION_IDS.empty);
    await filesRequest(sim, session, SESSION_IDS.empty);
    await demoSession(sim);
    await fetch(`${sim.url}/nowhere`, { signal: AbortSignal.timeout(2000) }).then((r) => r.text());
    expect(sim.control.counters()).toEqual({
      token: 2,
      tokenByGrant: { client_credentials: 1, refresh_token: 1 },
      audit: 2,
      session: 1,
      files: 2,
      unauthorized: 2,
      byStatus: { '200': 4, '400': 1, '401': 2, '404': 1 },
    });
    sim.control.resetCounters();
    expect(sim.control.counters()).toMatchObject({ token: 0, audit: 0, byStatus: {} });
  });

  it('counts faulted calls too', async () => {
    sim.control.resetCounters();
    sim.control.failNext(1, 503, { route: 'audit' });
    await audit();
    expect(sim.control.counters()).toMatchObject({ audit: 1, byStatus: { '503': 1 } });
  });
});
