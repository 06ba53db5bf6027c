/**
 * The row budget and the jit plugin read one coercion of a request's variables: a compiled audit
 * page's variables are coerced once before graphql-jit runs, and once by graphql-jit itself.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { GraphQLScalarType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { useJitForAuditPages } from '../../src/gateway/plugins/compat/jit.js';
import { useAuditRowLimits } from '../../src/gateway/plugins/limits/audit-row-budget.js';
import { useStreamInitialCount } from '../../src/gateway/plugins/limits/stream-initial-count.js';

describe('variables of a compiled audit page', () => {
  it('are coerced once by the plugins, whatever reads them', async () => {
    let coercions = 0;
    const PageSize = new GraphQLScalarType({
      name: 'PageSize',
      parseValue: (value) => {
        coercions++;
        return value;
      },
    });
    const schema = createSchema({
      typeDefs: 'scalar PageSize type Query { auditEvents(first: PageSize): [String!]! }',
      resolvers: { PageSize, Query: { auditEvents: (_: unknown, { first }: { first: number }) => Array.from({ length: first }, () => 'row') } },
    });
    const limits = { maxRows: 100, largeOperationRows: 50, largeOperationSessions: 3, largeOperationConcurrency: 1, largeAnswerStallMs: 60_000 };
    const yoga = createYoga({ schema, logging: false, plugins: [useStreamInitialCount(), useAuditRowLimits(limits), useJitForAuditPages()] });
    const send = async () => {
      const response = await yoga.fetch('http://yoga.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query($n: PageSize) { auditEvents(first: $n) }', variables: { n: 2 } }),
      });
      return response.json();
    };
    expect(await send()).toEqual({ data: { auditEvents: ['row', 'row'] } });
    coercions = 0;
    // Sent again, the operation runs compiled.
    expect(await send()).toEqual({ data: { auditEvents: ['row', 'row'] } });
    expect(coercions).toBe(2);
  });
});
