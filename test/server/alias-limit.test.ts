/**
 * The alias limit (src/gateway/plugins/limits/operation-limits.ts) counts every alias, those of `__typename`
 * included: 30 are served, the 31st is refused with the same answer whatever the aliased fields.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { operationLimits, useOperationLimits } from '../../src/gateway/plugins/limits/operation-limits.js';

const schema = createSchema({
  typeDefs: 'type Query { node: Node } type Node { name: String }',
  resolvers: { Query: { node: () => ({}) }, Node: { name: () => 'n' } },
});

async function post(query: string): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const yoga = createYoga({ schema, logging: false, plugins: useOperationLimits({ largeOperationConcurrency: 2 }) });
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

const typenames = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `t${from + i}: __typename`).join(' ');
const fields = (count: number) => Array.from({ length: count }, (_, i) => `n${i}: node { name }`).join(' ');
const refusal = (found: number) => ({
  errors: [{ message: `Aliases limit of 30 exceeded, found ${found}.`, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
});

describe('the alias limit', () => {
  it('is 30', () => {
    expect(operationLimits.maxAliases).toBe(30);
  });

  it('serves 30 aliases of __typename and refuses 31 as it refuses 31 of a field', async () => {
    const served = await post(`{ ${typenames(30)} }`);
    expect(served.errors).toBeUndefined();
    expect(Object.keys(served.data ?? {})).toHaveLength(30);
    expect(await post(`{ ${typenames(31)} }`)).toEqual(refusal(31));
    expect(await post(`{ ${fields(31)} }`)).toEqual(refusal(31));
    expect(await post(`{ ${typenames(35)} }`)).toEqual(refusal(35));
  });

  it('counts aliases of __typename and of fields together, nested and in fragments', async () => {
    expect((await post(`{ ${fields(15)} ${typenames(15)} }`)).errors).toBeUndefined();
    expect(await post(`{ ${fields(15)} ${typenames(16)} }`)).toEqual(refusal(31));
    expect(await post(`{ ${fields(20)} node { ${typenames(11)} } }`)).toEqual(refusal(31));
    expect(await post(`{ ...F ${typenames(1, 30)} } fragment F on Query { ${typenames(30)} }`)).toEqual(refusal(31));
  });

  it('does not count __typename asked for without an alias', async () => {
    expect((await post(`{ __typename ${typenames(30)} node { __typename name } }`)).errors).toBeUndefined();
  });
});
