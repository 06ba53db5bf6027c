/**
 * Every union member and every mapped field of auditEvents, compared field by field with the
 * simulator's own records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecordData } from '../../simulator/index.js';
import { fetchPage, groundTruth, HOUR, PAGE_QUERY, type Page } from '../helpers/audit.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let anchor: number;
let window: { from: string; to: string };
/** Gateway nodes of the newest 5000 records, by uuid, and the simulator's records for them. */
let nodes: Map<string, Record<string, any>>;
let records: AuditRecordData[];

beforeAll(async () => {
  anchor = Date.now();
  gw = await startTestGateway({ fullHistory: true });
  window = { from: new Date(anchor - 72 * HOUR).toISOString(), to: new Date(anchor).toISOString() };
  const page = await fetchPage(gw, { first: 5000, filter: window }, PAGE_QUERY);
  nodes = new Map(page.edges.map((e) => [e.node['uuid'] as string, e.node]));
  records = groundTruth(gw, window).slice(0, 5000);
});
afterAll(() => gw?.close());

const TYPE_NAMES: Record<string, string> = {
  LOGIN: 'LoginEvent',
  LAUNCH: 'LaunchEvent',
  LOGIN_ERROR: 'LoginErrorEvent',
  LAUNCH_ERROR: 'LaunchErrorEvent',
  Group: 'GroupEvent',
  AppEntitlement: 'AppEntitlementEvent',
  DyrectorySyncProfile: 'DirectorySyncProfileEvent',
  DirectorySyncProfile: 'DirectorySyncProfileEvent',
};

const str = (v: unknown) => (typeof v === 'string' ? v : null);
const bool = (v: unknown) => (v === 'true' || v === true ? true : v === 'false' || v === false ? false : null);
/** A second, independent reading of the label rule: split at commas not followed by a `)` before any `(`. */
const labels = (v: unknown) =>
  typeof v === 'string' ? v.split(/,(?![^()]*\))/).map((s) => s.trim()).filter(Boolean) : [];

/** What the contract says the gateway must return for a simulator record. */
function expected(r: AuditRecordData): Record<string, unknown> {
  const timestamp = r.timestamp ?? r.timeStamp!;
  const actorUuid = r.actorUuid ?? r.actorUUid ?? null;
  const system = r.actorId === null && r.actorUserName === null && r.actorDomain === null && actorUuid === null;
  const typename = TYPE_NAMES[r.objectType] ?? 'OtherAuditEvent';
  const v = r.values;
  const common = {
    __typename: typename,
    uuid: r.uuid,
    baseType: r.baseType.toUpperCase(),
    timestamp: new Date(timestamp).toISOString(),
    organizationId: r.organizationId,
    tenantId: r.tenantId,
    actor: system ? null : { id: r.actorId, userName: r.actorUserName, domain: r.actorDomain, uuid: actorUuid },
    clientId: r.clientId,
    deviceId: r.deviceId,
    workspaceId: r.workspaceId,
    sourceIp: r.sourceIp ?? r.sourceIP ?? null,
    objectType: r.objectType,
    objectId: r.objectId,
    objectName: r.objectName,
    objectAction: r.objectAction ?? null,
    values: v,
  };
  switch (typename) {
    case 'LoginEvent':
      return {
        ...common,
        success: bool(v['success']),
        authMethods: labels(v['authMethods']),
        deviceType: str(v['deviceType']),
        actorExternalId: str(v['actorExternalId']),
        failureMessage: str(v['failureMessage']),
      };
    case 'LaunchEvent':
      return { ...common, success: bool(v['success']), failureMessage: str(v['failureMessage']), resourceType: str(v['resourceType']) };
    case 'LoginErrorEvent':
    case 'LaunchErrorEvent':
      return { ...common, failureMessage: str(v['failureMessage']) };
    default:
      return common;
  }
}

const find = (test: (r: AuditRecordData) => boolean, what: string) => {
  const record = records.find(test);
  if (!record) throw new Error(`no seeded record: ${what}`);
  return { record, node: nodes.get(record.uuid)! };
};

describe('audit records', () => {
  it('maps every record of a 5000-row page field by field', () => {
    expect(nodes.size).toBe(5000);
    for (const record of records) expect(nodes.get(record.uuid)).toEqual(expected(record));
  });

  it.each(Object.entries(TYPE_NAMES).concat([['RuleSet', 'OtherAuditEvent'], ['LOGOUT', 'OtherAuditEvent']]))(
    'objectType %s is a %s',
    (objectType, typename) => {
      const { node } = find((r) => r.objectType === objectType, objectType);
      expect(node['__typename']).toBe(typename);
      expect(node['objectType']).toBe(objectType);
    },
  );

  it('has a null actor for system events and a service name for system services', () => {
    const system = find((r) => r.actorId === null && r.actorUserName === null && r.actorDomain === null, 'system event');
    expect(system.node['actor']).toBeNull();
    const service = find((r) => r.actorId === null && r.actorUserName !== null, 'system service');
    expect(service.node['actor']).toMatchObject({ id: null, userName: service.record.actorUserName });
  });

  it('reads a failed login: success false and its failureMessage', () => {
    const { record, node } = find((r) => r.objectType === 'LOGIN' && r.values['success'] === 'false', 'failed login');
    expect(node).toMatchObject({ success: false, failureMessage: record.values['failureMessage'] });
    expect(typeof node['failureMessage']).toBe('string');
    const ok = find((r) => r.objectType === 'LOGIN' && r.values['success'] === 'true', 'good login');
    expect(ok.node).toMatchObject({ success: true, failureMessage: null });
  });

  it('splits authMethods only at commas outside parentheses', () => {
    const { node } = find((r) => r.values['authMethods'] === 'Password (Local Directory), RSA SecurID (Token, PIN)', 'two methods');
    expect(node['authMethods']).toEqual(['Password (Local Directory)', 'RSA SecurID (Token, PIN)']);
    const single = find((r) => r.values['authMethods'] === 'RSA SecurID (Token, PIN)', 'one method with a comma');
    expect(single.node['authMethods']).toEqual(['RSA SecurID (Token, PIN)']);
    const launch = find((r) => r.objectType === 'LAUNCH', 'launch');
    expect(launch.node['resourceType']).toBe(launch.record.values['resourceType']);
  });

  it('carries objectAction on AUDIT records only', () => {
    const audit = find((r) => r.baseType === 'Audit', 'audit record');
    expect(audit.node).toMatchObject({ baseType: 'AUDIT', objectAction: audit.record.objectAction });
    expect(audit.node['objectAction']).toMatch(/^(CREATE|UPDATE|DELETE|LINK|UNLINK)$/);
    const action = find((r) => r.baseType === 'Action', 'action record');
    expect(action.node).toMatchObject({ baseType: 'ACTION', objectAction: null });
  });

  it('serializes timestamps as ISO-8601 UTC with milliseconds', () => {
    for (const node of nodes.values()) expect(node['timestamp']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('reads records written with the alias spellings (timeStamp, actorUUid, sourceIP)', async () => {
    const aliased = groundTruth(gw, window).filter((r) => 'timeStamp' in r || 'actorUUid' in r || 'sourceIP' in r);
    expect(aliased.length).toBeGreaterThan(0);
    for (const record of aliased) {
      const at = new Date(record.timestamp ?? record.timeStamp!).toISOString();
      const page: Page = await fetchPage(gw, { first: 100, filter: { from: at, to: at, objectType: record.objectType } }, PAGE_QUERY);
      expect(page.edges.map((e) => e.node).find((n) => n['uuid'] === record.uuid)).toEqual(expected(record));
    }
  });
});
