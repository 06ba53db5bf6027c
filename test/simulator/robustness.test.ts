import { request as rawRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDS, startSimulator, type Simulator } from '../../simulator/index.js';
import { auditRequest, demoSession, demoToken, filesRequest, http } from '../helpers/simulator-client.js';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ eventCount: 100 });
});
afterAll(() => sim.close());

/** Sends bytes as given (no client-side normalisation) and returns the status line. */
function rawStatus(path: string, method = 'GET', headers: Record<string, string> = {}): Promise<number> {
  const { hostname, port } = new URL(sim.url);
  return new Promise((resolve, reject) => {
    const req = rawRequest({ hostname, port, path, method, headers, timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

describe('bad input never crashes the server', () => {
  it('answers 404 to unknown paths and near misses', async () => {
    for (const path of ['/', '/SAAS/auth/oauthtoken/extra', '/analytics/reports/audit//', '/rest/com/vmware/cis/session/x', '/rest/com']) {
      expect((await http(`${sim.url}${path}`)).status, path).toBe(404);
    }
  });

  it('survives odd paths, encodings, headers and methods', async () => {
    const token = (await demoToken(sim)).access_token;
    expect(await rawStatus('/analytics/reports/audit/?objectType=%zz&pageSize=%')).toBe(401);
    expect(await rawStatus(`/analytics/reports/audit/?objectType=%E0%A4%A&pageSize=1`, 'GET', { authorization: `Bearer ${token}` })).toBe(200);
    expect(await rawStatus('/SAAS/auth/oauthtoken', 'POST', { authorization: 'Basic' })).toBe(401);
    expect(await rawStatus('/SAAS/auth/oauthtoken', 'POST', { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` })).toBe(401);
    expect(await rawStatus('/rest/com/vmware/cis/session', 'PUT')).toBe(405);
    expect(await rawStatus('/analytics/reports/audit/', 'DELETE', { authorization: `Bearer ${token}` })).toBe(405);
    expect(await rawStatus('/rest/com/vmware/content/library/item/updatesession/file?update_session_id=%ff', 'GET', { 'vmware-api-session-id': 'x' })).toBe(401);
  });

  it('refuses an oversized body with 413', async () => {
    const res = await http(`${sim.url}/SAAS/auth/oauthtoken`, { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024) }).catch(() => undefined);
    // The server may close the connection before the client finishes sending; either way it stays up.
    if (res) expect(res.status).toBe(413);
    expect((await auditRequest(sim, undefined)).status).toBe(401);
  });

  it('answers HEAD without a body', async () => {
    const token = (await demoToken(sim)).access_token;
    const res = await fetch(`${sim.url}/analytics/reports/audit/?pageSize=1`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(2000),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('still serves normally afterwards', async () => {
    const session = await demoSession(sim);
    expect((await filesRequest(sim, session, SESSION_IDS.mixed)).status).toBe(200);
  });
});
