/**
 * Errors in the later parts of an incremental result are masked like top-level ones: an
 * unexpected error's message never leaves; a deliberate one keeps its code.
 */
import { GraphQLError } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { describe, expect, it } from 'vitest';
import { useIncrementalErrorMasking } from '../../src/gateway/plugins/observability/incremental-masking.js';
import { multipartParts, type IncrementalPart } from '../clients/incremental-parts.js';

const schema = createSchema({
  typeDefs: 'type Query { fine: String! later: String secret: String items: [String] }',
  resolvers: {
    Query: {
      fine: () => 'ok',
      later: () => {
        throw new Error('connection to 10.0.0.7 refused');
      },
      secret: () => {
        throw new GraphQLError('Nope.', { extensions: { code: 'FORBIDDEN' } });
      },
      async *items() {
        yield 'a';
        throw new Error('stack detail');
      },
    },
  },
});

const mask = (error: unknown, message: string) => {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof GraphQLError) return original;
  return new GraphQLError(message, { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
};

async function errorsOf(query: string, plugins: Plugin[]) {
  const yoga = createYoga({ schema, plugins: plugins as Plugin<Record<string, unknown>>[], maskedErrors: { maskError: mask }, logging: false });
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({ query }),
  });
  const parts: IncrementalPart[] = [];
  for await (const part of multipartParts(response)) parts.push(part);
  return parts.slice(1).flatMap((part) => (part.incremental ?? []).flatMap((item) => item.errors ?? []));
}

const QUERY = '{ fine ... @defer { later secret } items @stream(initialCount: 0) }';

describe('incremental error masking', () => {
  it('masks unexpected errors of deferred fragments and streamed items, keeps coded ones', async () => {
    const errors = await errorsOf(QUERY, [useDeferStream() as Plugin, useIncrementalErrorMasking(mask, new WeakSet())]);
    expect(errors.map((e) => [e.message, e.extensions?.['code']]).sort()).toEqual([
      ['Nope.', 'FORBIDDEN'],
      ['Unexpected error.', 'INTERNAL_SERVER_ERROR'],
      ['Unexpected error.', 'INTERNAL_SERVER_ERROR'],
    ]);
    expect(JSON.stringify(errors)).not.toMatch(/10\.0\.0\.7|stack detail/);
  });

  it('is needed: without it the original messages leave in later parts', async () => {
    const errors = await errorsOf(QUERY, [useDeferStream() as Plugin]);
    expect(JSON.stringify(errors)).toMatch(/10\.0\.0\.7/);
  });
});
