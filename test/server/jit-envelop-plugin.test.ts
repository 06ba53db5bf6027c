/**
 * Why src/gateway/plugins/compat/jit.ts keeps its own cache instead of @envelop/graphql-jit: the
 * plugin keys what it compiles by document alone, so the second operation of a document runs the
 * first one's compiled query. This test fails the day the plugin compiles by operation.
 */
import { useGraphQlJit } from '@envelop/graphql-jit';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';

describe('@envelop/graphql-jit alone', () => {
  it('answers a document\'s second operation with the first one\'s compiled query', async () => {
    const schema = createSchema({ typeDefs: 'type Query { a: String b: String }', resolvers: { Query: { a: () => 'A', b: () => 'B' } } });
    const yoga = createYoga({ schema, logging: false, plugins: [useGraphQlJit()] });
    const query = 'query First { a } query Second { b }';
    const send = async (operationName: string) => {
      const response = await yoga.fetch('http://yoga.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, operationName }),
      });
      return response.json();
    };
    expect(await send('First')).toEqual({ data: { a: 'A' } });
    expect(await send('Second')).toEqual({ data: { a: 'A' } });
  });
});
