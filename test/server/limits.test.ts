import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationLimits } from '../../src/gateway/plugins/limits/operation-limits.js';
import { SESSION_IDS } from '../../simulator/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const recordFields = `uuid baseType timestamp organizationId tenantId actor { id userName domain uuid }
  clientId deviceId workspaceId sourceIp objectType objectId objectName objectAction values`;

/** Every field of every union member: the largest legitimate auditEvents selection. */
const everyAuditField = (args: string) => `
  query EveryField${args.startsWith('$') ? '' : ''} {
    auditEvents(${args}) {
      window { from to }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        cursor
        node {
          __typename
          ... on AuditRecord { ${recordFields} }
          ... on LoginEvent { success authMethods deviceType actorExternalId failureMessage }
          ... on LaunchEvent { success failureMessage resourceType }
          ... on LoginErrorEvent { failureMessage }
          ... on LaunchErrorEvent { failureMessage }
          ... on GroupEvent { ${recordFields} }
          ... on AppEntitlementEvent { ${recordFields} }
          ... on DirectorySyncProfileEvent { ${recordFields} }
          ... on OtherAuditEvent { ${recordFields} }
        }
      }
    }
  }`;

const messageParams = (depth: number): string =>
  `params { key value { dt s d precision format i ${depth > 0 ? `l { id ${messageParams(depth - 1)} }` : ''} } }`;

describe('operation limits', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ fullHistory: true, env: { MAX_REQUEST_BYTES: '65536' } });
  });
  afterAll(() => gateway.close());

  const upstreamCalls = () => {
    const c = gateway.sim.control.counters();
    return c.audit + c.files;
  };

  it('admits a full 5000-row page with every field, size as a literal', async () => {
    const result = await gateway.execute(everyAuditField('first: 5000'));
    expect(result.errors).toBeUndefined();
    expect(result.data.auditEvents.edges).toHaveLength(5000);
  });

  it('admits a full 5000-row page with every field, size as a variable', async () => {
    const query = everyAuditField('first: $first').replace('query EveryField', 'query EveryField($first: Int)');
    const result = await gateway.execute(query, { first: 5000 });
    expect(result.errors).toBeUndefined();
    expect(result.data.auditEvents.edges).toHaveLength(5000);
  });

  it('admits update session files with errorMessage nested three `l` levels deep', async () => {
    const result = await gateway.execute(
      `query Deep($id: ID!) { updateSessionFiles(updateSessionId: $id) { name errorMessage { id defaultMessage localized args ${messageParams(3)} } } }`,
      { id: SESSION_IDS.error },
    );
    expect(result.errors).toBeUndefined();
    const message = result.data.updateSessionFiles.find((f: any) => f.errorMessage)?.errorMessage;
    expect(message.params.some((p: any) => p.value.l?.params.some((q: any) => q.value.l?.params.some((r: any) => r.value.l)))).toBe(true);
  });

  it('rejects an alias bomb before any upstream call', async () => {
    gateway.sim.control.resetCounters();
    const aliases = Array.from({ length: 200 }, (_, i) => `a${i}: auditEvents(first: 5000) { edges { cursor } }`).join('\n');
    const result = await gateway.execute(`{ ${aliases} }`);
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(upstreamCalls()).toBe(0);
  });

  it.each([
    ['literals', '{ a: auditEvents(first: 5000) { edges { cursor } } b: auditEvents(last: 5000) { edges { cursor } } c: auditEvents(first: 1) { edges { cursor } } }', undefined],
    ['variables', 'query($n: Int) { a: auditEvents(first: $n) { edges { cursor } } b: auditEvents(first: $n) { edges { cursor } } c: auditEvents(first: $n) { edges { cursor } } }', { n: 4000 }],
  ])('rejects more audit rows than the budget in one operation (given as %s) before any upstream call', async (_kind, query, variables) => {
    gateway.sim.control.resetCounters();
    const result = await gateway.execute(query, variables);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(result.errors?.[0]?.message).toMatch(/at most 10000/);
    expect(upstreamCalls()).toBe(0);
  });

  it('rejects nesting deeper than the limit', async () => {
    gateway.sim.control.resetCounters();
    const result = await gateway.execute(
      `{ updateSessionFiles(updateSessionId: "${SESSION_IDS.error}") { errorMessage { ${messageParams(8)} } } }`,
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(result.errors?.some((e) => /depth limit/i.test(e.message))).toBe(true);
    expect(upstreamCalls()).toBe(0);
  });

  it('rejects a document with too many tokens as a parse failure', async () => {
    const fields = Array.from({ length: operationLimits.maxTokens }, () => '__typename').join(' ');
    const result = await gateway.execute(`{ ${fields} }`);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it('rejects too many directives', async () => {
    const directives = Array.from({ length: operationLimits.maxDirectives + 1 }, () => '@include(if: true)').join(' ');
    const result = await gateway.execute(`{ __typename ${directives} }`);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('rejects a request body over MAX_REQUEST_BYTES with 413', async () => {
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ __typename }`, variables: { padding: 'x'.repeat(70_000) } }),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).errors[0].message).toMatch(/larger than 65536 bytes/);
  });

  it('gives an operation that does not parse GRAPHQL_PARSE_FAILED, and one that does not validate GRAPHQL_VALIDATION_FAILED', async () => {
    expect((await gateway.execute('{ auditEvents(')).errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect((await gateway.execute('{ noSuchField }')).errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});
