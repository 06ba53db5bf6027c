/**
 * A POST whose content type the gateway does not read used to get 415 with an empty body. Over real
 * HTTP it is still 415, now with a JSON error carrying BAD_REQUEST, and nothing reaches an upstream.
 */
import { describe, expect, it } from 'vitest';
import { servedGateway } from '../helpers/gateway.js';

const served = servedGateway();

const BODY = JSON.stringify({ query: '{ auditEvents(first: 1) { edges { cursor } } }' });

describe('unsupported content types', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['application/graphql-response+json', 'application/graphql-response+json'],
    ['no content type', undefined],
  ])('answers a POST of %s with 415 and a JSON BAD_REQUEST error', async (_case, contentType) => {
    served.gateway.sim.control.resetCounters();
    const response = await fetch(served.server.url, {
      method: 'POST',
      headers: { 'x-graphql-yoga-csrf': '1', ...(contentType ? { 'content-type': contentType } : {}) },
      // Bytes: fetch gives them no content type of its own.
      body: new TextEncoder().encode(BODY),
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'Unsupported content type: send the GraphQL request as application/json.',
          extensions: { code: 'BAD_REQUEST' },
        },
      ],
    });
    const { token, audit } = served.gateway.sim.control.counters();
    expect(token + audit).toBe(0);
    expect(served.gateway.logs().filter((line) => (line.level as number) >= 50)).toEqual([]);
  });

  it('still serves the content types it reads', async () => {
    for (const contentType of ['application/json', 'application/graphql+json', 'application/json; charset=utf-8']) {
      const response = await fetch(served.server.url, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
    }
  });
});
