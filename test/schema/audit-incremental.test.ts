/**
 * @defer and @stream on auditEvents, over multipart/mixed and SSE: the first rows come in the
 * first part, the rest follow, and together they are the very page a plain request returns.
 * The gateway's limits and error reporting hold for incremental results.
 */
import { createYoga } from 'graphql-yoga';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_CHUNK_ROWS } from '../../src/gateway/schema/audit/connection.js';
import { useRowErrors } from '../../src/gateway/plugins/execution/audit-row-errors.js';
import { schema } from '../../src/gateway/schema/index.js';
import { UpstreamError } from '../../src/lib/errors.js';
import type { AuditReportQuery, IdentityApi } from '../../src/upstream/types.js';
import { multipartParts, type IncrementalPart } from '../clients/incremental-parts.js';
import { contextOver, fakeAudit, fakeRecord } from '../helpers/audit-fake-upstream.js';
import { assemble } from './incremental-result.js';
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

  it('masks errors in later parts as in single results: contract code, plain message', async () => {
    const query = `{ auditEvents(first: 2) { edges { cursor } } ... @defer { updateSessionFiles(updateSessionId: "no-such-session") { name } } }`;
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(await post(query, {}, 'multipart/mixed'))) parts.push(part);
    const { data, errors } = assemble(parts);
    expect(data.auditEvents.edges).toHaveLength(2);
    expect(data.updateSessionFiles).toBeNull();
    expect(errors).toEqual([
      expect.objectContaining({ path: ['updateSessionFiles'], extensions: { code: 'NOT_FOUND' } }),
    ]);
    expect(JSON.stringify(errors)).not.toMatch(/http|127\.0\.0\.1|stack/i);
    // The log has it, with its path, as for errors of single results.
    expect(gw.logs()).toContainEqual(expect.objectContaining({ code: 'NOT_FOUND', path: ['updateSessionFiles'] }));
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

/**
 * An audit report of `size` rows whose reads past the first chunk wait until `open()`: what a
 * client receives before then was sent while the rest of the page was still being read.
 */
function gatedAudit(size: number, unreadable: ReadonlySet<number> = new Set(), failFrom = Number.POSITIVE_INFINITY) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const calls: AuditReportQuery[] = [];
  const identity: IdentityApi = {
    async auditReport(query) {
      calls.push(query);
      if (query.startIndex >= FIRST_CHUNK_ROWS) await gate;
      if (query.startIndex >= failFrom) throw new UpstreamError('UPSTREAM_UNAVAILABLE', 'identity', 'The identity service is unavailable.');
      const rows = [];
      for (let p = query.startIndex; p < Math.min(size, query.startIndex + query.pageSize); p++) {
        rows.push(unreadable.has(p) ? { ok: false as const, reason: 'test' } : { ok: true as const, record: fakeRecord(p) });
      }
      return { rows };
    },
  };
  const yoga = createYoga({ schema, plugins: [useRowErrors(), useDeferStream()], context: contextOver(identity), logging: false });
  const stream = (first: number) =>
    yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({
        query: `{ auditEvents(first: ${first}) {
          edges @stream(initialCount: 10) { cursor node { ... on AuditRecord { uuid } } }
          ... @defer { totalCount pageInfo { hasNextPage endCursor } }
        } }`,
      }),
    });
  return { calls, open, stream, yoga };
}

const streamedRows = (part: IncrementalPart) =>
  (part.data?.auditEvents?.edges?.length ?? 0) + (part.incremental ?? []).reduce((n, item) => n + (item.items?.length ?? 0), 0);

describe('a streamed page read upstream in chunks', { timeout: 30_000 }, () => {
  it('sends the first chunk while the rest of the page is still being read', async () => {
    const audit = gatedAudit(5000);
    const parts: IncrementalPart[] = [];
    const reader = multipartParts(await audit.stream(3000));
    let received = 0;
    while (received < FIRST_CHUNK_ROWS) {
      const next = await reader.next();
      if (next.done) throw new Error('the stream ended early');
      parts.push(next.value);
      received += streamedRows(next.value);
    }
    // Exactly the first chunk is out, while no later read has been answered (one read of the whole
    // page would have started at 0 and sent everything at once).
    expect(received).toBe(FIRST_CHUNK_ROWS);
    audit.open();
    for await (const part of reader) parts.push(part);

    const { data, errors } = assemble(parts);
    expect(errors).toEqual([]);
    expect(data.auditEvents.edges.map((e: any) => e.node.uuid)).toEqual(Array.from({ length: 3000 }, (_, p) => `r${p}`));
    expect(data.auditEvents.pageInfo).toEqual({ hasNextPage: true, endCursor: data.auditEvents.edges[2999].cursor });
    expect(data.auditEvents.totalCount).toBe(5000);
    // The rest in chunks of at most 1000 rows, the last one a row longer for hasNextPage.
    const reads = audit.calls.filter((q) => q.pageSize > 1).map((q) => [q.startIndex, q.pageSize]);
    expect(reads).toEqual([[0, 100], [100, 1000], [1100, 1000], [2100, 900 + 1]]);
  });

  it('stops at the end of the window, which then gives totalCount without a probe', async () => {
    const audit = gatedAudit(1234);
    audit.open();
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(await audit.stream(3000))) parts.push(part);
    const { data } = assemble(parts);
    expect(data.auditEvents.edges).toHaveLength(1234);
    expect(data.auditEvents.pageInfo.hasNextPage).toBe(false);
    expect(data.auditEvents.totalCount).toBe(1234);
    expect(audit.calls.filter((q) => q.pageSize === 1)).toEqual([]);
  });

  it('reads in one go when the streamed edges are skipped', async () => {
    const audit = gatedAudit(5000);
    audit.open();
    const response = await audit.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({
        query: '{ auditEvents(first: 3000) { edges @stream @include(if: false) { cursor } pageInfo { hasNextPage } } }',
      }),
    });
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(response)) parts.push(part);
    expect(assemble(parts).data).toEqual({ auditEvents: { pageInfo: { hasNextPage: true } } });
    expect(audit.calls.filter((q) => q.pageSize > 1).map((q) => [q.startIndex, q.pageSize])).toEqual([[0, 3001]]);
  });

  it('ends with an error, not a crash, when a later chunk cannot be read', async () => {
    const audit = gatedAudit(5000, new Set(), 1100);
    audit.open();
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(await audit.stream(3000))) parts.push(part);
    const { data, errors } = assemble(parts);
    expect(parts.at(-1)!.hasNext).toBe(false);
    // The rows before the failed chunk were delivered; the failure is an error entry.
    expect(data.auditEvents.edges.length).toBeGreaterThanOrEqual(1100);
    expect(data.auditEvents.edges.length).toBeLessThan(3000);
    expect(errors.length).toBeGreaterThan(0);
  });

  it("reports a chunk's unreadable rows with the part that carries it", async () => {
    const audit = gatedAudit(3000, new Set([5, 1500]));
    audit.open();
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(await audit.stream(2000))) parts.push(part);
    const { data, errors } = assemble(parts);
    expect(data.auditEvents.edges).toHaveLength(1998);
    expect(errors.map((e) => [e.message, e.extensions?.code])).toEqual([
      ['Audit record at position 5 of the window could not be read.', 'UPSTREAM_INVALID_RESPONSE'],
      ['Audit record at position 1500 of the window could not be read.', 'UPSTREAM_INVALID_RESPONSE'],
    ]);
  });
});
