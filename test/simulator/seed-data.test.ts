import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRecordSchema } from '../../src/upstream/identity/schemas.js';
import { recordTimestamp, startSimulator, type AuditRecordData, type Simulator } from '../../simulator/index.js';
import { FIXED_START, HOUR, auditRequest, demoToken, manualClock, type AuditBody } from '../helpers/simulator-client.js';

let sim: Simulator;
let events: AuditRecordData[];

beforeAll(async () => {
  sim = await startSimulator({ now: manualClock().now });
  events = sim.control.events();
});
afterAll(() => sim.close());

const ofType = (type: string) => events.filter((e) => e.objectType === type);

describe('seeded audit history', () => {
  it('holds 24000 unique events inside the 72 hours before start', () => {
    expect(events).toHaveLength(24_000);
    expect(new Set(events.map((e) => e.uuid)).size).toBe(24_000);
    const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const wrong = events.filter((event) => {
      const ts = recordTimestamp(event);
      return !(ts > FIXED_START - 72 * HOUR && ts <= FIXED_START) || !uuidShape.test(event.uuid);
    });
    expect(wrong).toEqual([]);
  });

  it('parses with the gateway model (up to 300 records of every type)', () => {
    const perType = new Map<string, number>();
    const sample = events.filter((e) => {
      const seen = perType.get(e.objectType) ?? 0;
      perType.set(e.objectType, seen + 1);
      return seen < 300;
    });
    expect(sample.filter((e) => !auditRecordSchema.safeParse(e).success)).toEqual([]);
  });

  it('has every documented type, the alias DirectorySyncProfile and undocumented ones', () => {
    const types = new Set(events.map((e) => e.objectType));
    for (const type of [
      'LOGIN', 'LAUNCH', 'LOGIN_ERROR', 'LAUNCH_ERROR', 'Group', 'AppEntitlement', 'DyrectorySyncProfile',
      'DirectorySyncProfile', 'RuleSet', 'User', 'OAuth2Client', 'Tenant', 'LOGOUT',
    ]) {
      expect(types, type).toContain(type);
    }
  });

  it('makes upper-case types Action records without objectAction, mixed-case ones Audit records with one', () => {
    const actions = ['CREATE', 'UPDATE', 'DELETE', 'LINK', 'UNLINK'];
    const wrong = events.filter((event) =>
      /^[A-Z_]+$/.test(event.objectType)
        ? event.baseType !== 'Action' || 'objectAction' in event
        : event.baseType !== 'Audit' || !actions.includes(String(event.objectAction)),
    );
    expect(wrong).toEqual([]);
    const groupActions = new Set(ofType('Group').map((e) => e.objectAction));
    expect(groupActions).toEqual(new Set(actions));
  });

  it('includes system events and system services', () => {
    const system = events.filter((e) => e.actorId === null && e.actorUserName === null && e.actorDomain === null);
    expect(system.length).toBeGreaterThan(50);
    const services = events.filter((e) => e.actorId === null && e.actorUserName !== null);
    expect(services.length).toBeGreaterThan(50);
  });

  it('gives LOGIN records the documented values, failureMessage only on failures', () => {
    const logins = ofType('LOGIN');
    const wrong = logins.filter(({ values: v }) => {
      const documented =
        typeof v['deviceType'] === 'string' &&
        (v['success'] === 'true' || v['success'] === 'false') &&
        typeof v['authMethods'] === 'string' &&
        'actorExternalId' in v;
      return !documented || 'failureMessage' in v !== (v['success'] === 'false');
    });
    expect(wrong).toEqual([]);
    const methods = new Set(logins.map((l) => String(l.values['authMethods'])));
    expect(methods).toContain('Password (Local Directory)');
    expect(methods).toContain('RSA SecurID (Token, PIN)');
    expect([...methods].some((m) => /\), /.test(m))).toBe(true);
    expect(logins.some((l) => l.values['actorExternalId'] === null)).toBe(true);
  });

  it('gives LAUNCH and the error types their values', () => {
    const wrong = ofType('LAUNCH').filter(({ values: v }) => {
      const documented = (v['success'] === 'true' || v['success'] === 'false') && typeof v['resourceType'] === 'string';
      return !documented || 'failureMessage' in v !== (v['success'] === 'false');
    });
    expect(wrong).toEqual([]);
    for (const type of ['LOGIN_ERROR', 'LAUNCH_ERROR']) {
      expect(ofType(type).every((e) => typeof e.values['failureMessage'] === 'string')).toBe(true);
    }
  });

  it('spells a handful of records with the reference aliases', () => {
    const aliased = events.filter((e) => 'timeStamp' in e || 'actorUUid' in e || 'sourceIP' in e);
    expect(aliased.length).toBeGreaterThan(0);
    expect(aliased.length).toBeLessThanOrEqual(10);
    for (const key of ['timeStamp', 'actorUUid', 'sourceIP']) expect(aliased.some((e) => key in e), key).toBe(true);
    for (const e of aliased) {
      const parsed = auditRecordSchema.parse(e);
      expect(parsed.timestamp).toBe(recordTimestamp(e));
    }
  });

  it('fills the other fields', () => {
    expect(events.every((e) => e.organizationId === events[0]?.organizationId && e.tenantId === 'acme')).toBe(true);
    expect(events.some((e) => e.clientId !== null)).toBe(true);
    expect(events.some((e) => e.workspaceId !== null)).toBe(true);
    expect(events.filter((e) => e.deviceId?.startsWith('Mozilla/5.0')).length).toBeGreaterThan(1000);
    expect(events.every((e) => /^\d+\.\d+\.\d+\.\d+$/.test(String(e.sourceIp ?? e.sourceIP)))).toBe(true);
  });
});

describe('determinism and speed', () => {
  it('same seed and clock => same first page; another seed => different data', async () => {
    const firstPage = async (seed: number) => {
      // The whole history on one page: the default page size is audit-report.test.ts's.
      const other = await startSimulator({ now: manualClock().now, seed, eventCount: 1000 });
      try {
        const res = await auditRequest(other, (await demoToken(other)).access_token);
        return (res.json as AuditBody).data;
      } finally {
        await other.close();
      }
    };
    const [a, b, c] = await Promise.all([firstPage(11), firstPage(11), firstPage(12)]);
    expect(a).toHaveLength(1000);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
  });

  it('serves a full 5000-row page from deep in the data', async () => {
    const token = (await demoToken(sim)).access_token;
    const res = await auditRequest(sim, token, { startIndex: 15_000 });
    expect((res.json as AuditBody).data).toHaveLength(5000);
  });
});
