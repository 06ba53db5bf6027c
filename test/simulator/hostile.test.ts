/** The simulator's hostile answers, as a gateway sees them on the wire, and their HTTP control surface. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { auditRequest, control, demoToken, type AuditBody } from '../helpers/simulator-client.js';

let sim: Simulator;
let token: string;
beforeAll(async () => {
  sim = await startSimulator({ eventCount: 50 });
  token = (await demoToken(sim)).access_token;
});
afterAll(() => sim.close());
beforeEach(() => sim.control.clearFaults());

const record = (body: AuditBody, row: number) => body.data[row]![4];

describe('hostile answers', () => {
  it('huge-record and deep-record rewrite the first record only, as valid JSON', async () => {
    sim.control.hostileNext('audit', 'huge-record');
    const huge = (await auditRequest(sim, token, { pageSize: 3 })).json as AuditBody;
    expect(record(huge, 0).length).toBeGreaterThan(2 * 1024 * 1024);
    expect(JSON.parse(record(huge, 0))).toMatchObject({ uuid: expect.any(String) });
    expect(record(huge, 1).length).toBeLessThan(4096);

    expect((await control(sim, 'hostile-next', { route: 'audit', kind: 'deep-record' })).json).toEqual({ ok: true });
    const deep = (await auditRequest(sim, token, { pageSize: 3 })).json as AuditBody;
    expect(record(deep, 0)).toContain('['.repeat(5000));
  });

  it('oversize-body streams the asked-for length without a Content-Length', async () => {
    sim.control.hostileNext('audit', 'oversize-body', { bytes: 300_000 });
    const res = await fetch(`${sim.url}/analytics/reports/audit/`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.headers.get('content-length')).toBeNull();
    const text = await res.text();
    expect(text.length).toBe(300_000);
    expect(JSON.parse(text)).toMatchObject({ data: [] });
  });

  it('reset-mid-body and drop-connection fail the read; the next call is served', async () => {
    sim.control.hostileNext('audit', 'reset-mid-body');
    await expect(fetch(`${sim.url}/analytics/reports/audit/`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.text())).rejects.toThrow();
    await control(sim, 'hostile-next', { route: 'audit', kind: 'drop-connection' });
    await expect(fetch(`${sim.url}/analytics/reports/audit/`, { headers: { authorization: `Bearer ${token}` } })).rejects.toThrow();
    expect((await auditRequest(sim, token, { pageSize: 1 })).status).toBe(200);
  });

  it('inconsistent-pages empties multi-row answers while one-row reads still find rows', async () => {
    expect((await control(sim, 'inconsistent-pages', { count: 1 })).json).toEqual({ ok: true });
    expect(((await auditRequest(sim, token, { pageSize: 1 })).json as AuditBody).data).toHaveLength(1);
    expect(((await auditRequest(sim, token, { pageSize: 10 })).json as AuditBody).data).toHaveLength(0);
    expect(((await auditRequest(sim, token, { pageSize: 10 })).json as AuditBody).data).toHaveLength(10);
  });

  it('refuses a record-level kind on another route, and unknown kinds', async () => {
    expect(() => sim.control.hostileNext('files', 'huge-record')).toThrow(RangeError);
    expect((await control(sim, 'hostile-next', { route: 'files', kind: 'deep-record' })).status).toBe(400);
    expect((await control(sim, 'hostile-next', { route: 'audit', kind: 'explode' })).status).toBe(400);
  });
});
