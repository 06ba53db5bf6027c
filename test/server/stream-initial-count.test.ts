/**
 * `@stream(initialCount:)` below 0 or null used to reach the executor's invariant: an
 * INTERNAL_SERVER_ERROR for the field. Over real HTTP, a literal is a validation failure and a
 * variable is BAD_USER_INPUT, both before any upstream call; 0 and more still stream.
 */
import { describe, expect, it } from 'vitest';
import { multipartParts, type IncrementalPart } from '../clients/incremental-parts.js';
import { servedGateway } from '../helpers/gateway.js';

const served = servedGateway();

interface Answer {
  errors?: { message: string; extensions?: { code?: string } }[];
  data?: unknown;
}

const post = (query: string, variables: Record<string, unknown> | undefined, accept: string) =>
  fetch(served.server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify({ query, variables }),
  });

const upstreamCalls = () => {
  const c = served.gateway.sim.control.counters();
  return c.token + c.audit + c.session + c.files;
};

const streamed = (count: string, variables = '') =>
  `query${variables} { auditEvents(first: 3) { edges @stream(initialCount: ${count}) { cursor } } }`;

describe('@stream initialCount', () => {
  it.each([
    ['-1', '@stream initialCount must be 0 or more, found -1.'],
    ['null', '@stream initialCount must be 0 or more, found null.'],
  ])('refuses the literal %s with 400 GRAPHQL_VALIDATION_FAILED', async (count, message) => {
    served.gateway.sim.control.resetCounters();
    const response = await post(streamed(count), undefined, 'application/graphql-response+json');
    expect(response.status).toBe(400);
    const body = (await response.json()) as Answer;
    expect(body.errors?.map((e) => [e.message, e.extensions?.code])).toEqual([[message, 'GRAPHQL_VALIDATION_FAILED']]);
    expect(upstreamCalls()).toBe(0);
  });

  it('refuses a literal below 0 asked for over multipart/mixed, in the one part', async () => {
    const response = await post(streamed('-1'), undefined, 'multipart/mixed');
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(response)) parts.push(part);
    expect(parts.map((p) => p.errors?.map((e) => e.extensions?.code))).toEqual([['GRAPHQL_VALIDATION_FAILED']]);
  });

  it.each([
    ['a value below 0', '($n: Int)', { n: -5 }, '-5'],
    ['null', '($n: Int)', { n: null }, 'null'],
    ['a default below 0', '($n: Int = -3)', {}, '-3'],
  ])('refuses a variable given %s with BAD_USER_INPUT, before any upstream call', async (_case, definitions, variables, shown) => {
    served.gateway.sim.control.resetCounters();
    const response = await post(streamed('$n', definitions), variables, 'application/json');
    const body = (await response.json()) as Answer;
    expect(body.errors?.map((e) => [e.message, e.extensions?.code])).toEqual([
      [`Variable "$n" got invalid value ${shown}; @stream initialCount must be 0 or more.`, 'BAD_USER_INPUT'],
    ]);
    expect(body.data ?? null).toBeNull();
    expect(upstreamCalls()).toBe(0);
  });

  it('finds the variable through the fragments the operation spreads', async () => {
    const query = `query($n: Int) { ...Page }
      fragment Page on Query { auditEvents(first: 3) { ... on AuditEventConnection { edges @stream(initialCount: $n) { cursor } } } }`;
    const body = (await (await post(query, { n: -1 }, 'application/json')).json()) as Answer;
    expect(body.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
  });

  it.each([
    ['0 as a literal', streamed('0'), undefined],
    ['a variable of 2', streamed('$n', '($n: Int)'), { n: 2 }],
    ['an absent variable (the directive default, 0)', streamed('$n', '($n: Int)'), {}],
  ])('still streams %s', async (_case, query, variables) => {
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(await post(query, variables, 'multipart/mixed'))) parts.push(part);
    expect(parts.flatMap((p) => p.errors ?? [])).toEqual([]);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.at(-1)?.hasNext).toBe(false);
  });
});
