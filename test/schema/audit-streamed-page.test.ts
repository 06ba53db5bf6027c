/**
 * A streamed auditEvents page through the whole gateway (its masking, row errors and logs) over an
 * in-memory audit report: which selections stream, and that a streamed page answers exactly what
 * the same page read in one go answers, with the same upstream calls for its totalCount.
 */
import { createYoga } from 'graphql-yoga';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/lib/config.js';
import { UpstreamError } from '../../src/lib/errors.js';
import { createLogger } from '../../src/lib/logger.js';
import { schema } from '../../src/gateway/schema/index.js';
import type { AuditReportQuery, AuditRowResult, IdentityApi, Upstreams } from '../../src/upstream/types.js';
import { createGateway } from '../../src/gateway/yoga.js';
import { multipartParts, type IncrementalPart } from '../clients/incremental-parts.js';
import { contextOver, fakeRecord } from '../helpers/audit-fake-upstream.js';
import { MemoryLog } from '../helpers/memory-log.js';
import { assemble } from './incremental-result.js';

interface WindowOptions {
  readonly unreadable?: ReadonlySet<number>;
  /** Reads from this position on fail as an unavailable identity service would. */
  readonly failFrom?: number;
  /** Multi-row reads answer no rows while one-row probes still find them (pages contradicting the probes). */
  readonly inconsistent?: boolean;
  /** The record at this position has no uuid (the row parser never lets one through): its edge cannot be completed. */
  readonly broken?: number;
}

/** An audit window of `size` records r0, r1, ... (`size` may change between requests). */
function auditWindow(initialSize: number, options: WindowOptions = {}) {
  const window = { size: initialSize };
  const calls: AuditReportQuery[] = [];
  const identity: IdentityApi = {
    async auditReport(query) {
      calls.push(query);
      if (query.startIndex >= (options.failFrom ?? Number.POSITIVE_INFINITY)) {
        throw new UpstreamError('UPSTREAM_UNAVAILABLE', 'identity', 'The identity service is unavailable.');
      }
      const rows: AuditRowResult[] = [];
      if (options.inconsistent && query.pageSize > 1) return { rows };
      for (let p = query.startIndex; p < Math.min(window.size, query.startIndex + query.pageSize); p++) {
        if (options.unreadable?.has(p)) rows.push({ ok: false, reason: `field timestamp of row ${p}` });
        else if (p === options.broken) rows.push({ ok: true, record: { ...fakeRecord(p), uuid: null as unknown as string } });
        else rows.push({ ok: true, record: fakeRecord(p) });
      }
      return { rows };
    },
  };
  return { window, calls, identity };
}

/** Reads a response whole, incremental or not, and puts it together. */
async function settle(response: Response) {
  let parts: IncrementalPart[] = [];
  if (response.headers.get('content-type')?.startsWith('multipart/mixed')) {
    for await (const part of multipartParts(response)) parts.push(part);
  } else {
    parts = [(await response.json()) as IncrementalPart];
  }
  return assemble(parts);
}

const memories: MemoryLog[] = [];
afterEach(() => {
  for (const memory of memories.splice(0)) memory.destroy();
});

/** The gateway over an audit window; `run` answers a query and the upstream reads it made. */
function gatewayOver(initialSize: number, options: WindowOptions = {}) {
  const audit = auditWindow(initialSize, options);
  const upstreams: Upstreams = { identity: audit.identity, contentLibrary: undefined, close: async () => {} };
  const memory = new MemoryLog();
  memories.push(memory);
  const config = loadConfig({ GATEWAY_ALLOW_ANONYMOUS: 'true', LOG_LEVEL: 'debug' });
  const yoga = createGateway({ config, upstreams, log: createLogger({ level: 'debug', destination: memory }) });

  async function run(query: string, variables: Record<string, unknown> = {}) {
    audit.calls.length = 0;
    const response = await yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed, application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const result = await settle(response);
    // Multi-row reads as [startIndex, pageSize]; one-row reads are the probes that look for the window's end.
    const reads = audit.calls.filter((q) => q.pageSize > 1).map((q) => [q.startIndex, q.pageSize]);
    const probes = audit.calls.filter((q) => q.pageSize === 1).map((q) => q.startIndex);
    return { ...result, reads, probes };
  }
  return { window: audit.window, run, logs: () => memory.lines() };
}

const PAGE_INFO = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';
const streamed = (args: string) => /* GraphQL */ `{
  auditEvents(${args}) {
    edges @stream(initialCount: 10) { cursor node { ... on AuditRecord { uuid } } }
    window { from to }
    ... @defer { totalCount ${PAGE_INFO} }
  }
}`;
const plain = (args: string) => /* GraphQL */ `{
  auditEvents(${args}) { edges { cursor node { ... on AuditRecord { uuid } } } window { from to } totalCount ${PAGE_INFO} }
}`;

/** The reads of `first: 1500`, streamed: 100 rows, then at most 1000 at a time, the last one a row longer for hasNextPage. */
const CHUNKED = [[0, 100], [100, 1000], [1100, 400 + 1]];
const ONE_READ = [[0, 1501]];

describe('a streamed page answers what the same page read in one go answers', () => {
  // Both requests pin the same window ("now"), so their cursors are the same strings.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-02T10:00:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  interface PageCase {
    readonly window: number;
    readonly first?: number;
    readonly last?: number;
    /** Page after the cursor of this position, read before the window lost records down to `shrinkTo`. */
    readonly afterPosition?: number;
    readonly shrinkTo?: number;
    /** Whether one-row probes look for the window's end: for a `last` page, or for a totalCount the page did not learn. */
    readonly probes: boolean;
  }
  const cases: [string, PageCase][] = [
    ['no rows asked for', { window: 50, first: 0, probes: true }],
    ['an empty window', { window: 0, first: 500, probes: false }],
    ['a window that ends inside the first chunk', { window: 50, first: 500, probes: false }],
    ['a window that ends inside the first chunk, after a cursor', { window: 120, first: 500, afterPosition: 49, probes: false }],
    ['a window that ends where a chunk ends', { window: 1100, first: 1500, probes: false }],
    ['a window that ends where the page ends', { window: 1100, first: 1100, probes: false }],
    ['a window that ends inside a later chunk', { window: 1234, first: 1500, probes: false }],
    ['a window longer than the page', { window: 1600, first: 1500, probes: true }],
    ['a page after a cursor, in a window longer than the page', { window: 1600, first: 1200, afterPosition: 199, probes: true }],
    ['a cursor past the end of a window that has since lost records', { window: 300, first: 500, afterPosition: 199, shrinkTo: 150, probes: true }],
    // Read in one go: where the page starts is known only once the window's end is found.
    ['the last records', { window: 1000, last: 200, probes: true }],
  ];

  it.each(cases)('%s', async (_, { window, first, last, afterPosition, shrinkTo, probes }) => {
    const gateway = gatewayOver(window);
    let after = '';
    if (afterPosition !== undefined) {
      const before = await gateway.run(plain(`first: ${afterPosition + 1}`));
      after = `, after: "${before.data.auditEvents.pageInfo.endCursor}"`;
    }
    if (shrinkTo !== undefined) gateway.window.size = shrinkTo;
    const args = `${first !== undefined ? `first: ${first}` : `last: ${last}`}${after}`;

    const inOneGo = await gateway.run(plain(args));
    const inChunks = await gateway.run(streamed(args));
    expect(inChunks.errors).toEqual([]);
    expect(inChunks.data).toEqual(inOneGo.data);
    expect(inChunks.data.auditEvents.totalCount).toBe(shrinkTo ?? window);
    // totalCount costs the same probes: none where the page reached the window's end.
    expect(inChunks.probes).toEqual(inOneGo.probes);
    expect(inChunks.probes.length > 0).toBe(probes);
    if ((first ?? 0) > 100) expect(inChunks.reads[0]).toEqual([(afterPosition ?? -1) + 1, 100]);
  });
});

describe('which selections stream', () => {
  const withEdges = (edges: string, extra = '') => `{ auditEvents(first: 1500) { ${edges} pageInfo { hasNextPage } } } ${extra}`;
  const cases: [string, string, number[][]][] = [
    ['edges with @stream', withEdges('edges @stream { cursor }'), CHUNKED],
    ['edges with @stream(if: false)', withEdges('edges @stream(if: false) { cursor }'), ONE_READ],
    ['skipped streamed edges', withEdges('edges @stream @skip(if: true) { cursor }'), ONE_READ],
    [
      'streamed edges in an inline fragment after a deferred one',
      withEdges('... @defer { totalCount } ... on AuditEventConnection { edges @stream { cursor } }'),
      CHUNKED,
    ],
    [
      'streamed edges in a named fragment',
      withEdges('...StreamedEdges', 'fragment StreamedEdges on AuditEventConnection { edges @stream { cursor } }'),
      CHUNKED,
    ],
    [
      'edges without @stream beside a named fragment spread twice',
      withEdges('edges { cursor } ...Window ... on AuditEventConnection { ...Window }', 'fragment Window on AuditEventConnection { window { from } }'),
      ONE_READ,
    ],
  ];

  it.each(cases)('%s', async (_, query, expectedReads) => {
    const { data, errors, reads } = await gatewayOver(2000).run(query);
    expect(errors).toEqual([]);
    expect(data.auditEvents.pageInfo).toEqual({ hasNextPage: true });
    expect(data.auditEvents.edges?.length ?? 0).toBe(query.includes('@skip') ? 0 : 1500);
    expect(reads).toEqual(expectedReads);
  });

  it('answers a query whose fragments spread the next one twice, 40 levels deep', async () => {
    // Without the gateway's cost limit: each fragment is looked into once, not 2^40 times.
    const depth = 40;
    const fragments = Array.from({ length: depth }, (_, i) =>
      i + 1 < depth ? `fragment F${i} on AuditEventConnection { ...F${i + 1} ...F${i + 1} }` : `fragment F${i} on AuditEventConnection { window { from } }`,
    );
    const audit = auditWindow(2000);
    const yoga = createYoga({ schema, plugins: [useDeferStream()], context: contextOver(audit.identity), logging: false });
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed, application/json' },
      body: JSON.stringify({ query: `{ auditEvents(first: 1500) { edges { cursor } ...F0 } } ${fragments.join(' ')}` }),
    });
    const { data, errors } = await settle(response);
    expect(errors).toEqual([]);
    expect(data.auditEvents.edges).toHaveLength(1500);
  });
});

describe('a streamed page that cannot be read to its end', { timeout: 10_000 }, () => {
  it('ends with the failed read coded on the edges and on pageInfo', async () => {
    const { data, errors } = await gatewayOver(2000, { failFrom: 1100 }).run(streamed('first: 1500'));
    expect(data.auditEvents.edges).toHaveLength(1100);
    expect(errors.map((e) => [e.path, e.extensions?.code, e.message])).toEqual([
      [['auditEvents', 'edges', 1100], 'UPSTREAM_UNAVAILABLE', 'The identity service is unavailable.'],
      [['auditEvents', 'pageInfo'], 'UPSTREAM_UNAVAILABLE', 'The identity service is unavailable.'],
    ]);
  });

  it('ends, pageInfo with it, when an edge cannot be completed and the stream stops there', async () => {
    const gateway = gatewayOver(2000, { broken: 150 });
    const { data, errors } = await gateway.run(streamed('first: 1500'));
    expect(data.auditEvents.edges.slice(0, 100).map((e: any) => e.node.uuid)).toEqual(Array.from({ length: 100 }, (_, p) => `r${p}`));
    expect(errors.map((e) => [e.path, e.extensions?.code])).toEqual([
      [['auditEvents', 'pageInfo'], 'INTERNAL_SERVER_ERROR'],
      [['auditEvents', 'edges', 150, 'node', 'uuid'], 'INTERNAL_SERVER_ERROR'],
    ]);
    // The operator reads why pageInfo is missing.
    expect(gateway.logs()).toContainEqual(
      expect.objectContaining({ path: ['auditEvents', 'pageInfo'], err: expect.objectContaining({ message: 'The streamed page was not read to its end.' }) }),
    );
  });
});

describe('unreadable rows in the log', () => {
  const rowWarnings = (logs: Record<string, any>[]) => logs.filter((line) => line.msg?.startsWith('auditEvents: rows left out'));

  it('one warning per page: the service, the count and the first 20 positions with their reasons', async () => {
    const unreadable = new Set(Array.from({ length: 25 }, (_, i) => 3 + i));
    const gateway = gatewayOver(100, { unreadable });
    const { errors } = await gateway.run(plain('first: 40'));
    expect(errors).toHaveLength(25);
    // A page without unreadable rows warns of nothing.
    expect((await gateway.run(plain('first: 2'))).errors).toEqual([]);
    expect(rowWarnings(gateway.logs())).toEqual([
      expect.objectContaining({
        level: 40,
        code: 'UPSTREAM_INVALID_RESPONSE',
        service: 'identity',
        unreadable: 25,
        positions: Array.from({ length: 20 }, (_, i) => ({ position: 3 + i, reason: `field timestamp of row ${3 + i}` })),
        msg: 'auditEvents: rows left out of the page because their records could not be read',
      }),
    ]);
  });

  it('a streamed page warns once for each chunk that had some, and never for the others', async () => {
    const gateway = gatewayOver(3000, { unreadable: new Set([5, 1500]) });
    const { data } = await gateway.run(streamed('first: 2000'));
    expect(data.auditEvents.edges).toHaveLength(1998);
    expect(rowWarnings(gateway.logs()).map((line) => line.positions)).toEqual([
      [{ position: 5, reason: 'field timestamp of row 5' }],
      [{ position: 1500, reason: 'field timestamp of row 1500' }],
    ]);
  });
});

describe('a read that contradicts the probes', () => {
  it('fails the page with UPSTREAM_INVALID_RESPONSE, and logs what was read against what the probes saw', async () => {
    const gateway = gatewayOver(1000, { inconsistent: true });
    const { data, errors, probes } = await gateway.run(plain('last: 10'));
    expect(probes.length).toBeGreaterThan(0);
    expect(data).toEqual({ auditEvents: null });
    expect(errors).toEqual([
      expect.objectContaining({
        path: ['auditEvents'],
        extensions: { code: 'UPSTREAM_INVALID_RESPONSE' },
        message: 'The audit report answered inconsistently while paging.',
      }),
    ]);
    // The operator sees which read came back short, and how many rows the probes had seen there.
    expect(gateway.logs()).toContainEqual(
      expect.objectContaining({
        code: 'UPSTREAM_INVALID_RESPONSE',
        path: ['auditEvents'],
        detail: { service: 'identity', offset: expect.any(Number), rows: 0, expectedRows: expect.any(Number) },
      }),
    );
  });
});
