/**
 * The audit-row budget counts what execution will really ask for: literals, variables, variable
 * defaults, and fields reached through fragments. Nothing reaches the upstream when it is exceeded.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ simulator: { eventCount: 50 } });
});
afterAll(() => gw.close());
beforeEach(() => gw.sim.control.resetCounters());

const aliases = (count: number, args: string) =>
  Array.from({ length: count }, (_, i) => `a${i}: auditEvents(${args}) { edges { cursor } }`).join('\n');

const expectRejected = async (query: string, variables?: Record<string, unknown>) => {
  const response = await gw.execute(query, variables);
  expect(response.errors?.map((e) => e.extensions?.code)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  expect(response.errors?.[0]?.message).toMatch(/audit rows/);
  expect(gw.sim.control.counters().audit).toBe(0);
};

describe('audit-row budget', () => {
  it('counts a variable default when no variables are sent', async () => {
    await expectRejected(`query Big($n: Int = 5000) { ${aliases(30, 'first: $n, filter: { objectType: "LOGIN" }')} }`);
  });

  it('counts a default of `last` too, and a default overridden by a sent value', async () => {
    await expectRejected(`query Big($n: Int = 5000) { ${aliases(3, 'last: $n')} }`);
    await expectRejected(`query Big($n: Int = 1) { ${aliases(3, 'first: $n')} }`, { n: 5000 });
  });

  it('counts fields reached through named and inline fragments', async () => {
    await expectRejected(`
      query Big($n: Int = 4000) { ...Pages ... on Query { c: auditEvents(first: $n) { edges { cursor } } } }
      fragment Pages on Query { a: auditEvents(first: $n) { edges { cursor } } b: auditEvents(first: 4000) { edges { cursor } } }
    `);
  });

  it('counts one response key once, however many fragments reach it', async () => {
    const response = await gw.execute(`
      query Two($n: Int = 5000) { ...A ...B }
      fragment A on Query { page: auditEvents(first: $n) { edges { cursor } } }
      fragment B on Query { page: auditEvents(first: $n) { pageInfo { hasNextPage } } }
    `);
    expect(response.errors).toBeUndefined();
    expect(response.data.page.edges).toHaveLength(50);
  });

  it('admits the largest legitimate operation: two full pages from defaults', async () => {
    const response = await gw.execute(`query Two($n: Int = 5000) { ${aliases(2, 'first: $n')} }`);
    expect(response.errors).toBeUndefined();
    expect(response.data.a0.edges).toHaveLength(50);
  });
});
