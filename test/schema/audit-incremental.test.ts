/**
 * @defer and @stream on auditEvents, over multipart/mixed and SSE: the first rows come in the
 * first part, the rest follow, and together they are the very page a plain request returns.
 * The gateway's limits and error reporting hold for incremental results.
 */
import { createYoga } from 'graphql-yoga';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRowErrors } from '../../src/schema/audit-row-errors.js';
import { schema } from '../../src/schema/index.js';
import { multipartParts, type IncrementalPart } from '../clients/incremental-parts.js';
import { fakeAudit } from '../helpers/audit-fake-upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const STREAMED = /* GraphQL */ `
  query Streamed($first: Int!) {
    auditEvents(first: $first) {
      edges @stream(initialCount: 10) { cursor node { ... on AuditRecord { uuid } } }
      ... @defer(label: "count") { totalCount pageInfo { hasNextPage endCursor } }
    }
  }
`;
const PLAIN = /* GraphQL */ `
  query Plain($first: Int!) {
    auditEvents(first: $first) {
      edges { cursor node { ... on AuditRecord { uuid } } }
      totalCount
      pageInfo { hasNextPage endCursor }
    }
  }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ simulator: { eventCount: 3000 }, env: { LARGE_OPERATION_CONCURRENCY: '1' } });
});
afterAll(() => gw?.close());

const post = (query: string, variables: Record<string, unknown>, accept: string) =>
  gw.fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify({ query, variables }),
  });

/** Applies incremental parts to the first part's data (2022 incremental format). */
function assemble(parts: IncrementalPart[]) {
  const data = structuredClone(parts[0]!.data);
  const errors = [...(parts[0]!.errors ?? [])];
  for (const part of parts.slice(1)) {
    errors.push(...(part.errors ?? []));
    for (const item of part.incremental ?? []) {
      errors.push(...(item.errors ?? []));
      if (item.items) {
        const list = item.path.slice(0, -1).reduce((at: any, key) => at[key], data);
        list.splice(item.path.at(-1) as number, item.items.length, ...item.items);
      } else {
        Object.assign(item.path.reduce((at: any, key) => at[key], data), item.data);
      }
    }
  }
  return { data, errors };
}

describe('@stream and @defer on auditEvents', { timeout: 30_000 }, () => {
  it('over multipart/mixed: the first rows first, then the rest; together the same page as a plain request', async () => {
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(await post(STREAMED, { first: 2000 }, 'multipart/mixed'))) parts.push(part);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts[0]!.hasNext).toBe(true);
    expect(parts[0]!.data.auditEvents.edges).toHaveLength(10);
    expect(parts[0]!.data.auditEvents.totalCount).toBeUndefined();
    expect(parts.at(-1)!.hasNext).toBe(false);

    const plain = await gw.execute(PLAIN, { first: 2000 });
    const streamed = assemble(parts);
    expect(streamed.errors).toEqual([]);
    expect(streamed.data.auditEvents.edges).toHaveLength(2000);
    expect(streamed.data.auditEvents.edges.map((e: any) => e.node.uuid)).toEqual(
      plain.data.auditEvents.edges.map((e: any) => e.node.uuid),
    );
    expect(streamed.data.auditEvents.totalCount).toBe(plain.data.auditEvents.totalCount);
    expect(streamed.data.auditEvents.pageInfo.hasNextPage).toBe(true);
  });

  it('over SSE (text/event-stream)', async () => {
    const response = await post(STREAMED, { first: 30 }, 'text/event-stream');
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await response.text())
      .split('\n\n')
      .filter((block) => block.includes('event: next'))
      .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as IncrementalPart);
    expect(events[0]!.data.auditEvents.edges).toHaveLength(10);
    expect(assemble(events).data.auditEvents.edges).toHaveLength(30);
  });

  it('keeps the row budget: too many rows are refused before any upstream call', async () => {
    gw.sim.control.resetCounters();
    const query = `{ a: auditEvents(first: 5000) { edges @stream { cursor } } b: auditEvents(first: 5000) { edges @stream { cursor } } c: auditEvents(first: 10) { edges { cursor } } }`;
    const body = (await (await post(query, {}, 'multipart/mixed, application/json')).text()) as string;
    expect(body).toContain('GRAPHQL_VALIDATION_FAILED');
    expect(gw.sim.control.counters().audit).toBe(0);
  });

  it('frees the large-operation slot once a streamed response is read or dropped', async () => {
    // One slot: a leak would leave the second and third requests waiting for ever.
    for await (const _ of multipartParts(await post(STREAMED, { first: 1500 }, 'multipart/mixed'))) void _;
    const abort = new AbortController();
    const dropped = await gw.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({ query: STREAMED, variables: { first: 1500 } }),
      signal: abort.signal,
    });
    const reader = multipartParts(dropped);
    await reader.next();
    abort.abort();
    await reader.return(undefined);
    const after = await gw.execute(PLAIN, { first: 1500 });
    expect(after.data.auditEvents.edges).toHaveLength(1500);
  });
});

describe('row errors in incremental results', () => {
  it('go out with the part that carries the page, coded and without detail', async () => {
    const audit = fakeAudit(40, { unreadable: new Set([3, 25]) });
    const yoga = createYoga({ schema, plugins: [useRowErrors(), useDeferStream()], context: () => audit.context(), logging: false });
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({
        query: '{ ... @defer { page: auditEvents(first: 30) { edges @stream(initialCount: 1) { cursor } } } }',
      }),
    });
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(response)) parts.push(part);
    const { data, errors } = assemble(parts);
    expect(data.page.edges).toHaveLength(28);
    expect(errors.map((e) => [e.message, e.extensions?.code])).toEqual([
      ['Audit record at position 3 of the window could not be read.', 'UPSTREAM_INVALID_RESPONSE'],
      ['Audit record at position 25 of the window could not be read.', 'UPSTREAM_INVALID_RESPONSE'],
    ]);
  });
});
