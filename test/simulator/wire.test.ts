/** The wire log: what the simulator received, with every secret fingerprinted. */
import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_USER, SESSION_IDS, startSimulator, type Simulator } from '../../simulator/index.js';
import { WireLog } from '../../simulator/wire-log.js';
import {
  auditRequest,
  basic,
  control,
  demoSession,
  demoToken,
  filesRequest,
  http,
  tokenRequest,
} from '../helpers/simulator-client.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ eventCount: 50 });
});
beforeEach(() => sim.wire.clear());
afterAll(() => sim.close());

const base64 = (text: string) => Buffer.from(text).toString('base64');

describe('wire log', () => {
  it('records a token request: form fields, headers, status; the client secret only as a fingerprint', async () => {
    const res = await tokenRequest(
      sim,
      { grant_type: 'client_credentials', scope: 'admin' },
      { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) },
    );
    expect(res.status).toBe(200);
    const [request, ...more] = sim.wire.requests('token');
    expect(more).toEqual([]);
    expect(request).toMatchObject({
      route: 'token',
      method: 'POST',
      path: '/SAAS/auth/oauthtoken',
      query: {},
      form: { grant_type: 'client_credentials', scope: 'admin' },
      status: 200,
    });
    expect(request!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request!.headers.authorization).toBe(`Basic ${sim.wire.fingerprint(base64(`${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`))}`);
    expect(JSON.stringify(sim.wire.requests())).not.toContain(base64(`${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`));
  });

  it('fingerprints secret form and query fields, and the same value the same way', async () => {
    const { refresh_token: refreshToken } = await demoToken(sim);
    await tokenRequest(
      sim,
      { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: DEMO_CLIENT.id, client_secret: DEMO_CLIENT.secret },
      {},
      `?refresh_token=${refreshToken}`,
    );
    const refresh = sim.wire.requests('token').at(-1)!;
    expect(refresh.form).toEqual({
      grant_type: 'refresh_token',
      refresh_token: sim.wire.fingerprint(refreshToken),
      client_id: DEMO_CLIENT.id,
      client_secret: sim.wire.fingerprint(DEMO_CLIENT.secret),
    });
    expect(refresh.query).toEqual({ refresh_token: sim.wire.fingerprint(refreshToken) });
    expect(sim.wire.fingerprint(refreshToken)).toMatch(/^#[0-9a-f]{16}$/);
    expect(sim.wire.fingerprint(refreshToken)).not.toBe(sim.wire.fingerprint(`${refreshToken}x`));
    const text = JSON.stringify(sim.wire.requests());
    for (const secret of [refreshToken, DEMO_CLIENT.secret]) expect(text).not.toContain(secret);
  });

  it('records data calls with their query and credential headers fingerprinted, and unknown paths', async () => {
    const token = (await demoToken(sim)).access_token;
    const session = await demoSession(sim);
    sim.wire.clear();
    await auditRequest(sim, token, { pageSize: 2, startIndex: 1 });
    await filesRequest(sim, session, SESSION_IDS.ready);
    await http(`${sim.url}/nowhere?x=1`, { headers: { cookie: `vmware-api-session-id=${session}` } });

    const [audit, files, nowhere] = sim.wire.requests();
    expect(audit).toMatchObject({ route: 'audit', method: 'GET', path: '/analytics/reports/audit/', status: 200 });
    expect(audit!.query).toEqual({ pageSize: '2', startIndex: '1' });
    expect(audit!.form).toBeUndefined();
    expect(audit!.headers.authorization).toBe(`Bearer ${sim.wire.fingerprint(token)}`);
    expect(files!.query).toEqual({ update_session_id: SESSION_IDS.ready });
    expect(files!.headers['vmware-api-session-id']).toBe(sim.wire.fingerprint(session));
    expect(nowhere).toMatchObject({ route: undefined, path: '/nowhere', query: { x: '1' }, status: 404 });
    expect(nowhere!.headers.cookie).toBe(sim.wire.fingerprint(`vmware-api-session-id=${session}`));
    const text = JSON.stringify(sim.wire.requests());
    for (const secret of [token, session]) expect(text).not.toContain(secret);
  });

  it('records the status of each answer, faults included, and leaves control calls out', async () => {
    sim.control.failNext(1, 503, { route: 'session' });
    const login = () =>
      http(`${sim.url}/rest/com/vmware/cis/session`, { method: 'POST', headers: { authorization: basic(DEMO_USER.username, DEMO_USER.password) } });
    await login();
    await login();
    await control(sim, 'counters');
    expect(sim.wire.requests().map((r) => [r.route, r.status])).toEqual([
      ['session', 503],
      ['session', 200],
    ]);
  });

  it('keeps only the latest entries', () => {
    const wire = new WireLog(3);
    const res = Object.assign(new EventEmitter(), { statusCode: 200 });
    for (let i = 0; i < 5; i++) {
      const url = new URL(`http://simulator.test/analytics/reports/audit/?startIndex=${i}`);
      wire.record({ method: 'GET', url, headers: {}, body: '' }, 'audit', res);
    }
    expect(wire.requests().map((r) => r.query.startIndex)).toEqual(['2', '3', '4']);
    expect(wire.requests('token')).toEqual([]);
    res.emit('finish');
    expect(wire.requests().map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it('answers on the control surface: list (optionally by route) and clear', async () => {
    const token = (await demoToken(sim)).access_token;
    await auditRequest(sim, token, { pageSize: 1 });
    const all = (await control(sim, 'wire')).json as { requests: { route: string }[] };
    expect(all.requests.map((r) => r.route)).toEqual(['token', 'audit']);
    const audit = (await http(`${sim.url}/__simulator/wire?route=audit`)).json as { requests: { route: string; query: object }[] };
    expect(audit.requests).toEqual([expect.objectContaining({ route: 'audit', query: { pageSize: '1' } })]);
    expect((await control(sim, 'wire/clear', {})).json).toEqual({ ok: true });
    expect(sim.wire.requests()).toEqual([]);
    expect((await control(sim, 'no-such-operation', {})).status).toBe(404);
  });
});
