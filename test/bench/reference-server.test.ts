/**
 * The bench's reference server (bare Yoga + jit) must answer the bench query with the gateway's
 * rows, or comparing their CPU per request would compare different work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_QUERY } from '../../bench/scenarios.js';
import { startReferenceServer, type ReferenceServer } from '../../bench/reference-server.js';
import { DEMO_CLIENT } from '../../simulator/index.js';
import { startTestGateway, type GraphQLResponse, type TestGateway } from '../helpers/gateway.js';

const HOUR = 3_600_000;
/** One more than the largest page: a full 5000-row page still has a next page. */
const EVENTS = 5001;

interface Page {
  auditEvents: {
    window: { from: string; to: string };
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    edges: { node: Record<string, unknown> & { uuid: string; __typename: string } }[];
  };
}

let gateway: TestGateway;
let reference: ReferenceServer;
let startedAt: number;

beforeAll(async () => {
  startedAt = Date.now();
  gateway = await startTestGateway({ simulator: { seed: 3, eventCount: EVENTS } });
  reference = await startReferenceServer({ identityUrl: gateway.sim.url, clientId: DEMO_CLIENT.id, clientSecret: DEMO_CLIENT.secret });
  // The gateway compiles a document the second time it is sent, and the bench measures it compiled:
  // compared from here on is that path.
  const hour = { from: new Date(startedAt - HOUR).toISOString(), to: new Date(startedAt).toISOString() };
  expect((await gateway.execute(AUDIT_QUERY, { first: 1, ...hour })).errors).toBeUndefined();
});
afterAll(async () => {
  await reference?.close();
  await gateway?.close();
});

async function referencePage(variables: Record<string, unknown>): Promise<GraphQLResponse<Page>> {
  const res = await fetch(`${reference.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: AUDIT_QUERY, variables }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as GraphQLResponse<Page>;
}

/** Both answers, checked free of errors; the cursors differ by design (the gateway's are opaque). */
async function bothPages(first: number, fromMillis: number, toMillis: number) {
  const variables = { first, from: new Date(fromMillis).toISOString(), to: new Date(toMillis).toISOString() };
  const [fromGateway, fromReference] = await Promise.all([gateway.execute<Page>(AUDIT_QUERY, variables), referencePage(variables)]);
  expect(fromGateway.errors).toBeUndefined();
  expect(fromReference.errors).toBeUndefined();
  return { gw: fromGateway.data!.auditEvents, ref: fromReference.data!.auditEvents };
}

/**
 * The answer, the cursor left out. Field order is not compared: the reference runs graphql-jit as it
 * comes, which writes a member type's fragment before an interface's (the gateway keeps the document's order).
 */
const withoutCursor = ({ window, pageInfo: { hasNextPage }, edges }: Page['auditEvents']) => ({ window, pageInfo: { hasNextPage }, edges });

describe('reference server', () => {
  it('answers a 20-row page exactly as the gateway does', async () => {
    const { gw, ref } = await bothPages(20, startedAt - 72 * HOUR, startedAt);
    expect(ref.edges).toHaveLength(20);
    expect(ref.pageInfo.hasNextPage).toBe(true);
    expect(ref.pageInfo.endCursor).toEqual(expect.any(String));
    expect(withoutCursor(ref)).toEqual(withoutCursor(gw));
  });

  it('maps every record of a full 5000-row page like the gateway: union members, actors, alias spellings', async () => {
    const { gw, ref } = await bothPages(5000, startedAt - 72 * HOUR, startedAt);
    expect(ref.edges).toHaveLength(5000);
    // The 5001st event is found by the extra one-row read (the upstream clamps pages at 5000).
    expect(ref.pageInfo.hasNextPage).toBe(true);
    const aliased = new Set(
      gateway.sim.control
        .events()
        .filter((r) => 'timeStamp' in r || 'actorUUid' in r || 'sourceIP' in r)
        .map((r) => r.uuid),
    );
    const nodes = ref.edges.map((e) => e.node);
    expect(nodes.filter((n) => aliased.has(n.uuid)).length).toBeGreaterThan(0);
    expect(new Set(nodes.map((n) => n.__typename)).size).toBeGreaterThan(2);
    expect(nodes.some((n) => n['actor'] === null)).toBe(true);
    expect(withoutCursor(ref)).toEqual(withoutCursor(gw));
  });

  it('says there is no next page at the end of the window', async () => {
    const { gw, ref } = await bothPages(5000, startedAt - 2 * HOUR, startedAt);
    expect(ref.edges.length).toBeGreaterThan(0);
    expect(ref.edges.length).toBeLessThan(5000);
    expect(ref.pageInfo.hasNextPage).toBe(false);
    expect(withoutCursor(ref)).toEqual(withoutCursor(gw));
  });
});
