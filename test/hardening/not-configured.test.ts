/** An upstream without a URL in upstream mode: its fields answer UPSTREAM_NOT_CONFIGURED, the other upstream's work. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDS } from '../../simulator/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { settleTicks, watchUnhandled } from './unhandled.js';

const unhandled = watchUnhandled();
afterEach(async () => {
  await settleTicks();
  expect(unhandled.errors).toEqual([]);
});
afterAll(() => unhandled.stop());

const codes = (response: { errors?: { path?: unknown[]; extensions?: { code?: string } }[] }) =>
  Object.fromEntries((response.errors ?? []).map((e) => [JSON.stringify(e.path), e.extensions?.code]));

const SESSION_FIELDS = /* GraphQL */ `
  query ($id: ID!, $r: [_Any!]!) {
    files: updateSessionFiles(updateSessionId: $id) { name }
    session: updateSession(id: $id) { id }
    _entities(representations: $r) { __typename }
  }
`;
const AUDIT = '{ auditEvents(first: 3) { edges { cursor } } }';

describe('only the identity service configured', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ simulator: { eventCount: 20 }, env: { CONTENT_LIBRARY_URL: '', CONTENT_LIBRARY_USERNAME: '', CONTENT_LIBRARY_PASSWORD: '' } });
  });
  afterAll(() => gw.close());

  it('updateSessionFiles, updateSession and _entities answer UPSTREAM_NOT_CONFIGURED', async () => {
    const response = await gw.execute(SESSION_FIELDS, {
      id: SESSION_IDS.ready,
      r: [{ __typename: 'UpdateSession', id: SESSION_IDS.ready }, { __typename: 'UpdateSession', id: SESSION_IDS.mixed }],
    });
    expect(response.data).toEqual({ files: null, session: null, _entities: [null, null] });
    expect(codes(response)).toEqual({
      '["files"]': 'UPSTREAM_NOT_CONFIGURED',
      '["session"]': 'UPSTREAM_NOT_CONFIGURED',
      '["_entities",0]': 'UPSTREAM_NOT_CONFIGURED',
      '["_entities",1]': 'UPSTREAM_NOT_CONFIGURED',
    });
    expect(gw.sim.control.counters().files).toBe(0);
  });

  it('auditEvents still works', async () => {
    const response = await gw.execute(AUDIT);
    expect(response.errors).toBeUndefined();
    expect(response.data.auditEvents.edges).toHaveLength(3);
  });
});

describe('only the content library configured', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ simulator: { eventCount: 20 }, env: { IDENTITY_BASE_URL: '', IDENTITY_CLIENT_ID: '', IDENTITY_CLIENT_SECRET: '' } });
  });
  afterAll(() => gw.close());

  it('auditEvents answers UPSTREAM_NOT_CONFIGURED', async () => {
    const response = await gw.execute('{ a: auditEvents(last: 2) { edges { cursor } } }');
    expect(response.data).toEqual({ a: null });
    expect(codes(response)).toEqual({ '["a"]': 'UPSTREAM_NOT_CONFIGURED' });
    expect(gw.sim.control.counters().audit).toBe(0);
  });

  it('update sessions still work', async () => {
    const response = await gw.execute('query ($id: ID!) { updateSession(id: $id) { id } }', { id: SESSION_IDS.ready });
    expect(response.errors).toBeUndefined();
    expect(response.data.updateSession.id).toBe(SESSION_IDS.ready);
  });
});
