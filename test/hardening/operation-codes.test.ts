/** Operations the schema cannot run get the contract's codes, never INTERNAL_SERVER_ERROR. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ simulator: { eventCount: 0 } });
});
afterAll(() => gw.close());

const codes = (response: { errors?: { extensions?: { code?: string } }[] }) => response.errors?.map((e) => e.extensions?.code);

describe('operation types and operation selection', () => {
  it.each(['mutation { x }', 'mutation Named { auditEvents { edges { cursor } } }'])(
    '%s is GRAPHQL_VALIDATION_FAILED',
    async (query) => {
      const response = await gw.execute(query);
      expect(codes(response)).toContain('GRAPHQL_VALIDATION_FAILED');
      expect(codes(response)).not.toContain('INTERNAL_SERVER_ERROR');
      expect(response.data ?? null).toBeNull();
    },
  );

  it('subscription { x } is GRAPHQL_VALIDATION_FAILED, whether or not the schema has subscriptions', async () => {
    const response = await gw.execute('subscription { x }');
    expect(codes(response)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });

  it.each([
    ['two anonymous operations', '{ __typename } { __typename }', undefined],
    ['two named operations without operationName', 'query A { __typename } query B { __typename }', undefined],
    ['an operationName the document lacks', 'query A { __typename }', 'B'],
  ])('%s is BAD_REQUEST', async (_case, query, operationName) => {
    const response = await gw.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, operationName }),
    });
    const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(response.status).toBe(400);
    expect(codes(body)).toEqual(['BAD_REQUEST']);
  });
});
