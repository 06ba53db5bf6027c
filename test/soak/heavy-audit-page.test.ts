/**
 * Audit pages within every byte and depth bound whose records parse into far more heap than their
 * bytes (`[{},{},...]`: 3 bytes of JSON, about 64 bytes of heap each). The gateway runs as its own
 * process with a heap smaller than one such page parsed whole would take; it must answer and keep
 * serving, the heavy rows unreadable, whatever else the page holds read.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGatewayOverIdentity, type GatewayProcess } from '../helpers/process.js';

const HEAP_MB = 160;
const HEADER = ['reports.dateAndTime', 'reports.userDomain', 'reports.Event', 'reports.object', ''];

/** A window of `rows` records, each carrying `emptyObjects` empty objects but the first; its page at `startIndex`. */
function heavyPage(rows: number, emptyObjects: number, query: URLSearchParams): string {
  const toMillis = Number(query.get('toMillis'));
  const startIndex = Number(query.get('startIndex'));
  const end = Math.min(rows, startIndex + Number(query.get('pageSize')));
  const heavy = `[${new Array(emptyObjects).fill('{}').join(',')}]`;
  const data = [];
  for (let i = startIndex; i < end; i++) {
    const record = `{"baseType":"Action","uuid":"u-${i}","timestamp":${toMillis - i},"objectType":"LOGIN","x":${i === 0 ? '[]' : heavy}}`;
    data.push([String(toMillis - i), 'a', 'LOGIN', null, record]);
  }
  return JSON.stringify({ header: HEADER, data, _links: { self: { href: '/x' } } });
}

/** Token and audit routes of an identity service whose audit pages come from `page`. */
function fakeIdentity(page: (query: URLSearchParams) => string): Server {
  return createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://identity');
    response.setHeader('content-type', 'application/json');
    if (url.pathname === '/SAAS/auth/oauthtoken') {
      request.resume();
      response.end(JSON.stringify({ access_token: 'token', token_type: 'Bearer', expires_in: 3600 }));
    } else if (url.pathname === '/analytics/reports/audit/') {
      response.end(page(url.searchParams));
    } else {
      response.statusCode = 404;
      response.end('{}');
    }
  });
}

/** A page whose rows are millions of empty arrays: heavy before any record is read. */
function manyArrays(count: number): string {
  return `{"header":${JSON.stringify(HEADER)},"data":[${new Array(count).fill('[]').join(',')}],"_links":{"self":{"href":"/x"}}}`;
}

const QUERY = 'query ($first: Int) { auditEvents(first: $first) { edges { node { ... on AuditRecord { uuid } } } } }';

describe(`heavy audit pages, gateway heap capped at ${HEAP_MB} MB`, () => {
  let body: (query: URLSearchParams) => string = () => '';
  let identity: Server;
  let gateway: GatewayProcess;
  let url: string;
  beforeAll(async () => {
    identity = fakeIdentity((query) => body(query));
    await new Promise<void>((resolve) => identity.listen(0, '127.0.0.1', resolve));
    gateway = runGatewayOverIdentity(identity, HEAP_MB);
    url = await gateway.ready;
  }, 90_000);
  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    await new Promise((resolve) => identity?.close(resolve));
  });

  const ask = async (first: number) => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: QUERY, variables: { first } }),
    });
    return (await response.json()) as {
      data?: { auditEvents: { edges: { node: { uuid: string } }[] } };
      errors?: { extensions?: { code?: string } }[];
    };
  };

  it.each([
    // 340,000 values a record, each record just under 1 MB (P4): all but the first over the record's bound.
    { name: '15 records of 1 MB', rows: 15, emptyObjects: 340_000, first: 20, edges: 1, errors: 14 },
    // 996 values a record, within the record's bound: the page's bound stops them after 503 records
    // (6 + 502 * 996 values); 4497 row errors, 50 entries and one for the rest.
    { name: '5000 records of 3 KB', rows: 5000, emptyObjects: 990, first: 5000, edges: 503, errors: 51 },
  ])('$name of empty objects: an answer, and the gateway keeps serving', { timeout: 60_000 }, async (page) => {
    body = (query) => heavyPage(page.rows, page.emptyObjects, query);
    const all = new URLSearchParams({ toMillis: '0', startIndex: '0', pageSize: String(page.rows) });
    // Within the 16 MB body bound, and far past the heap when parsed whole (about 20 bytes of heap a byte).
    expect(Buffer.byteLength(body(all))).toBeGreaterThan(14_000_000);
    expect(Buffer.byteLength(body(all))).toBeLessThan(16 * 1024 * 1024);
    for (let round = 0; round < 2; round++) {
      const answer = await ask(page.first);
      expect(answer.data?.auditEvents.edges.map((edge) => edge.node.uuid)).toEqual(
        Array.from({ length: page.edges }, (_, i) => `u-${i}`),
      );
      expect(answer.errors?.map((error) => error.extensions?.code)).toEqual(
        new Array(page.errors).fill('UPSTREAM_INVALID_RESPONSE'),
      );
    }
    expect(gateway.child.exitCode).toBeNull();
  });

  it('a page of millions of empty rows: UPSTREAM_INVALID_RESPONSE, and the gateway keeps serving', { timeout: 60_000 }, async () => {
    const page = manyArrays(5_000_000);
    expect(page.length).toBeLessThan(16 * 1024 * 1024);
    body = () => page;
    for (let round = 0; round < 2; round++) {
      const answer = await ask(20);
      expect(answer.data?.auditEvents ?? null).toBeNull();
      expect(answer.errors?.map((error) => error.extensions?.code)).toEqual(['UPSTREAM_INVALID_RESPONSE']);
    }
    expect(gateway.child.exitCode).toBeNull();
  });
});
