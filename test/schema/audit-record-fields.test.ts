/** Record fields read from the upstream record: the actor, and a login's success and authMethods. */
import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/gateway/schema/index.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';
import type { IdentityApi } from '../../src/upstream/types.js';
import { contextOver, fakeRecord } from '../helpers/audit-fake-upstream.js';

/** Runs `query` over an audit report holding exactly these records, newest first. */
async function run(records: AuditRecord[], query: string) {
  const identity: IdentityApi = {
    async auditReport(q) {
      return { rows: records.slice(q.startIndex, q.startIndex + q.pageSize).map((record) => ({ ok: true as const, record })) };
    },
  };
  const yoga = createYoga({ schema, context: contextOver(identity), logging: false });
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data: any; errors?: unknown[] };
}

describe('record fields', () => {
  it('gives an actor when any of its four fields is known, and null for a system event', async () => {
    const records = [
      fakeRecord(0),
      { ...fakeRecord(1), actorId: 7 },
      { ...fakeRecord(2), actorUserName: 'admin' },
      { ...fakeRecord(3), actorDomain: 'System Domain' },
      { ...fakeRecord(4), actorUuid: 'u-4' },
    ];
    const body = await run(records, '{ auditEvents(first: 5) { edges { node { ... on AuditRecord { actor { id userName domain uuid } } } } } }');
    expect(body.errors).toBeUndefined();
    expect(body.data.auditEvents.edges.map((e: any) => e.node.actor)).toEqual([
      null,
      { id: 7, userName: null, domain: null, uuid: null },
      { id: null, userName: 'admin', domain: null, uuid: null },
      { id: null, userName: null, domain: 'System Domain', uuid: null },
      { id: null, userName: null, domain: null, uuid: 'u-4' },
    ]);
  });

  it("reads a login's success and authMethods from its values", async () => {
    const records = [{ ...fakeRecord(0), values: { success: 'false', authMethods: 'Password, Token (PIN, OTP)' } }];
    const body = await run(records, '{ auditEvents(first: 1) { edges { node { ... on LoginEvent { success authMethods } } } } }');
    expect(body.errors).toBeUndefined();
    expect(body.data.auditEvents.edges[0].node).toEqual({ success: false, authMethods: ['Password', 'Token (PIN, OTP)'] });
  });
});
