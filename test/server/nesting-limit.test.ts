/**
 * Documents within the token limit but nested thousands deep used to overflow the parser's stack
 * (HTTP 500, INTERNAL_SERVER_ERROR). Over real HTTP they are parse failures, and a document nested
 * to the limit is parsed and validated without trouble. The bracket count itself:
 * nesting-limit-units.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { operationLimits } from '../../src/gateway/plugins/limits/operation-limits.js';
import { servedGateway } from '../helpers/gateway.js';

const served = servedGateway();

const TOO_DEEP = `Syntax Error: The document is nested too deeply (more than ${operationLimits.maxNesting} levels).`;

const post = (query: string) =>
  fetch(served.server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query }),
  });

const upstreamCalls = () => {
  const c = served.gateway.sim.control.counters();
  return c.token + c.audit + c.session + c.files;
};

/** A representation whose extra field `x` nests `depth` lists (the whole document: depth + 4 brackets). */
const deepRepresentation = (depth: number) =>
  `{ _entities(representations: [{__typename: "UpdateSession", id: "x", x: ${'['.repeat(depth)}${']'.repeat(depth)}}]) { __typename } }`;

describe('nesting limit', () => {
  it.each([
    ['list brackets in an argument, never closed', `{ auditEvents(first: ${'['.repeat(3990)} ) { totalCount } }`],
    ['lists in an _entities representation', deepRepresentation(3900)],
    ['selection sets', `{ a ${'{ a '.repeat(3000)}${'}'.repeat(3001)}`],
  ])('answers %s thousands deep with 400 GRAPHQL_PARSE_FAILED, calling no upstream', async (_case, query) => {
    served.gateway.sim.control.resetCounters();
    const response = await post(query);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ errors: [{ message: TOO_DEEP, extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] });
    expect(upstreamCalls()).toBe(0);
    expect(served.gateway.logs().filter((line) => (line.level as number) >= 50 || /RangeError/.test(JSON.stringify(line)))).toEqual([]);
  });

  it('parses and validates a document nested to the limit, and refuses one level more', async () => {
    const atLimit = operationLimits.maxNesting - 4;
    const accepted = (await (await post(deepRepresentation(atLimit))).json()) as { errors?: { extensions: { code: string } }[] };
    expect(accepted.errors?.map((e) => e.extensions.code)).toEqual(['NOT_FOUND']);

    const refused = (await (await post(deepRepresentation(atLimit + 1))).json()) as { errors: { message: string }[] };
    expect(refused.errors.map((e) => e.message)).toEqual([TOO_DEEP]);
  });

  it('answers a selection nested to the limit with the depth limit, a validation failure', async () => {
    const depth = operationLimits.maxNesting - 1;
    const response = await post(`{ a ${'{ a '.repeat(depth)}${'}'.repeat(depth + 1)}`);
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(new Set(body.errors.map((e) => e.extensions.code))).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
  });
});
