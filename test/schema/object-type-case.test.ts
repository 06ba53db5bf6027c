/**
 * The upstream matches objectType case-sensitively, so `login` or `GROUP` would silently match
 * nothing: a known type in another case is BAD_USER_INPUT naming the right spelling, for the page
 * filter and the live filter alike, before any upstream call. Other values pass through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registered, startLiveServer, subscribeSse, subscribeWs, type LiveServer } from '../live/live-server.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const MISSPELT: [given: string, meant: string][] = [
  ['login', 'LOGIN'],
  ['GROUP', 'Group'],
  ['Login_Error', 'LOGIN_ERROR'],
  ['appentitlement', 'AppEntitlement'],
  ['dyrectorysyncprofile', 'DyrectorySyncProfile'],
  ['DIRECTORYSYNCPROFILE', 'DirectorySyncProfile'],
];

const PAGE = 'query ($objectType: String) { auditEvents(first: 5, filter: { objectType: $objectType }) { edges { node { ... on AuditRecord { objectType } } } } }';

describe('auditEvents filter.objectType', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.close());

  it.each(MISSPELT)('%s is BAD_USER_INPUT: did you mean %s?', async (given, meant) => {
    gw.sim.control.resetCounters();
    const response = await gw.execute(PAGE, { objectType: given });
    expect(response.data).toEqual({ auditEvents: null });
    expect(response.errors).toMatchObject([{ path: ['auditEvents'], extensions: { code: 'BAD_USER_INPUT' } }]);
    expect(response.errors![0]!.message).toContain(`did you mean ${meant}?`);
    expect(gw.sim.control.counters().audit).toBe(0);
  });

  it.each(['LOGIN', 'Group'])('%s, spelt as the upstream spells it, returns its records', async (objectType) => {
    const response = await gw.execute(PAGE, { objectType });
    expect(response.errors).toBeUndefined();
    const types = response.data.auditEvents.edges.map((e: { node: { objectType: string } }) => e.node.objectType);
    expect(types.length).toBeGreaterThan(0);
    expect(new Set(types)).toEqual(new Set([objectType]));
  });

  it('passes a type the gateway does not know on to the upstream as given', async () => {
    gw.sim.control.resetCounters();
    const response = await gw.execute(PAGE, { objectType: 'TenantPolicy' });
    expect(response.errors).toBeUndefined();
    expect(response.data.auditEvents.edges).toEqual([]);
    expect(gw.sim.control.counters().audit).toBeGreaterThan(0);
  });
});

describe('auditEventAdded filter.objectType', () => {
  let server: LiveServer;
  beforeAll(async () => {
    server = await startLiveServer({ simulator: { eventCount: 10 } });
  });
  afterAll(() => server?.close());

  it.each(MISSPELT.slice(0, 2))('%s is BAD_USER_INPUT over SSE and WebSocket: did you mean %s?', async (given, meant) => {
    const started = server.liveAudit.stats().started;
    for (const subscribe of [subscribeSse, subscribeWs]) {
      const sub = subscribe(server.url, { filter: { objectType: given } });
      await sub.received.until((r) => r.done);
      // SSE sends the errors as a result; graphql-ws's client throws those of an `error` message.
      const errors = sub.received.errors.length > 0 ? sub.received.errors : sub.received.failure;
      expect(errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT' } }]);
      expect((errors as { message: string }[])[0]!.message).toContain(`did you mean ${meant}?`);
      if ('dispose' in sub.client) await sub.client.dispose();
    }
    expect(server.liveAudit.stats().started).toBe(started);
  });

  it('subscribes to a type the gateway does not know, as given', async () => {
    const sub = await registered(server, () => subscribeSse(server.url, { filter: { objectType: 'TenantPolicy' } }));
    expect(sub.received.errors).toEqual([]);
    await sub.stop();
  });
});
