/**
 * A hostile or broken identity service: huge and deeply nested records, oversize, endless and
 * cut-off bodies, pages that contradict the probes. Each ends as a contract error for its item,
 * the rest of the answer intact, and nothing broken is ever cached.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { HOUR } from '../helpers/audit.js';
import { multipartParts, type IncrementalPart } from '../clients/incremental-parts.js';
import {
  scriptedAuditPage,
  scriptedAuditRow,
  scriptedEnv,
  startScriptedUpstream,
  type ScriptedRequest,
  type ScriptedUpstream,
} from '../helpers/scripted-upstream.js';
import { settleTicks, watchUnhandled } from './unhandled.js';

const PAGE = /* GraphQL */ `
  query ($first: Int, $last: Int, $filter: AuditEventFilter) {
    auditEvents(first: $first, last: $last, filter: $filter) {
      pageInfo { hasNextPage }
      edges { cursor node { ... on AuditRecord { uuid values } } }
    }
  }
`;
const BODY_CAP_BYTES = 4 * 1024 * 1024;
const codes = (response: { errors?: { extensions?: { code?: string } }[] }) => response.errors?.map((e) => e.extensions?.code);

let unhandled: ReturnType<typeof watchUnhandled>;
beforeEach(() => {
  unhandled = watchUnhandled();
});
afterEach(async () => {
  await settleTicks();
  unhandled.stop();
  expect(unhandled.errors).toEqual([]);
});

describe('hostile records and bodies', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      simulator: { eventCount: 2000 },
      // A cap above a 2 MB record; time for a busy machine to read the body over it before the deadline.
      env: { UPSTREAM_TIMEOUT_MS: '5000', UPSTREAM_MAX_BODY_BYTES: String(BODY_CAP_BYTES), AUDIT_CACHE_MAX_BYTES: '0' },
    });
  });
  afterAll(() => gw.close());
  beforeEach(() => gw.sim.control.clearFaults());

  it.each([
    ['a record longer than 1 MB', 'huge-record'],
    ['a record nested 5000 levels deep', 'deep-record'],
  ] as const)('%s is one unreadable row; the rest of the page comes back', async (_case, kind) => {
    gw.sim.control.hostileNext('audit', kind);
    const response = await gw.execute(PAGE, { first: 20 });
    expect(response.data?.auditEvents.edges).toHaveLength(19);
    expect(codes(response)).toEqual(['UPSTREAM_INVALID_RESPONSE']);
    expect(response.errors?.[0]?.message).toMatch(/position 0/);
  });

  it('a body over UPSTREAM_MAX_BODY_BYTES is UPSTREAM_INVALID_RESPONSE', async () => {
    gw.sim.control.hostileNext('audit', 'oversize-body', { bytes: BODY_CAP_BYTES + 1024 });
    const response = await gw.execute(PAGE, { first: 20 });
    expect(response.data).toEqual({ auditEvents: null });
    expect(codes(response)).toEqual(['UPSTREAM_INVALID_RESPONSE']);
    expect(gw.logs().some((line) => line.msg === 'upstream call failed' && JSON.stringify(line).includes('size limit'))).toBe(true);
  });

  it('a connection reset halfway through the body is UPSTREAM_UNAVAILABLE', async () => {
    gw.sim.control.hostileNext('audit', 'reset-mid-body');
    const response = await gw.execute(PAGE, { first: 20 });
    expect(codes(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });

  it('pages that contradict the probes of a `last:` search are UPSTREAM_INVALID_RESPONSE', async () => {
    gw.sim.control.inconsistentPages(1);
    const response = await gw.execute(PAGE, { last: 10 });
    expect(codes(response)).toEqual(['UPSTREAM_INVALID_RESPONSE']);
    expect(gw.logs().some((line) => (line.err as { type?: string } | undefined)?.type === 'TypeError')).toBe(false);
  });
});

describe('a body that never ends', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // A deadline of its own, short: nothing else here has a large body to read.
    gw = await startTestGateway({ env: { UPSTREAM_TIMEOUT_MS: '1000', AUDIT_CACHE_MAX_BYTES: '0' } });
  });
  afterAll(() => gw.close());

  it('is UPSTREAM_UNAVAILABLE within the deadline', async () => {
    gw.sim.control.hostileNext('audit', 'endless-body');
    const response = await gw.execute(PAGE, { first: 20 });
    expect(codes(response)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });
});

describe('a body cap set lower', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ simulator: { eventCount: 2000 }, env: { UPSTREAM_MAX_BODY_BYTES: String(256 * 1024) } });
  });
  afterAll(() => gw.close());

  it('refuses a page larger than the cap, and serves one below it', async () => {
    const small = await gw.execute(PAGE, { first: 50 });
    expect(small.errors).toBeUndefined();
    const large = await gw.execute(PAGE, { first: 2000 });
    expect(codes(large)).toEqual(['UPSTREAM_INVALID_RESPONSE']);
  });
});

describe('the closed-window cache and unreadable rows', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ simulator: { eventCount: 2000 } });
  });
  afterAll(() => gw.close());

  it('never keeps a page that had an unreadable row: the next request sees the recovered upstream', async () => {
    const now = Date.now();
    const filter = { from: new Date(now - 72 * HOUR).toISOString(), to: new Date(now - 2 * HOUR).toISOString() };
    gw.sim.control.hostileNext('audit', 'huge-record');
    const broken = await gw.execute(PAGE, { first: 10, filter });
    expect(codes(broken)).toEqual(['UPSTREAM_INVALID_RESPONSE']);
    const recovered = await gw.execute(PAGE, { first: 10, filter });
    expect(recovered.errors).toBeUndefined();
    expect(recovered.data.auditEvents.edges).toHaveLength(10);
    // A clean closed-window page is kept as before.
    const calls = gw.sim.control.counters().audit;
    await gw.execute(PAGE, { first: 10, filter });
    expect(gw.sim.control.counters().audit).toBe(calls);
  });
});

describe('credentials an upstream hands out', () => {
  let upstream: ScriptedUpstream;
  let gw: TestGateway;
  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    gw = await startTestGateway({ env: { ...scriptedEnv(upstream), UPSTREAM_TIMEOUT_MS: '5000' } });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.close();
  });
  beforeEach(() => upstream.clear());

  it('a 1 MB access token is refused once for 20 concurrent queries and never sent; the next query asks again', async () => {
    // Kept, it would be copied into every request: a megabyte of headers for each query.
    upstream.answerNext('token', { body: { access_token: 'a'.repeat(1024 * 1024), expires_in: 10_799 } });
    const responses = await Promise.all(Array.from({ length: 20 }, () => gw.execute(PAGE, { first: 1 })));
    expect(new Set(responses.map((response) => codes(response)?.join()))).toEqual(new Set(['UPSTREAM_INVALID_RESPONSE']));
    expect(upstream.requests('token')).toHaveLength(1);
    expect(upstream.requests('audit')).toHaveLength(0);

    const next = await gw.execute(PAGE, { first: 1 });
    expect(next.errors).toBeUndefined();
    expect(upstream.requests('token')).toHaveLength(2);
  });

  it('a session id with CR/LF is refused and never kept; the next query logs in again', async () => {
    upstream.answerNext('session', { body: { value: 'a\r\nb' } });
    const query = 'query ($id: ID!) { updateSessionFiles(updateSessionId: $id) { name } }';
    expect(codes(await gw.execute(query, { id: 'some-session' }))).toEqual(['UPSTREAM_INVALID_RESPONSE']);
    expect(upstream.requests('files')).toHaveLength(0);
    const next = await gw.execute(query, { id: 'some-session' });
    expect(next).toEqual({ data: { updateSessionFiles: [] } });
    expect(upstream.requests('session')).toHaveLength(2);
  });
});

describe('an audit page longer than the pageSize asked', () => {
  let upstream: ScriptedUpstream;
  let gw: TestGateway;
  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    gw = await startTestGateway({ env: { ...scriptedEnv(upstream), UPSTREAM_TIMEOUT_MS: '5000', AUDIT_CACHE_MAX_BYTES: '0' } });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.close();
  });

  const UUIDS = '{ edges { node { ... on AuditRecord { uuid } } } }';
  /** Filter `wide`: 50 rows that are not even rows, whatever was asked; any other: two good rows. */
  const byFilter = {
    body: (request: ScriptedRequest) =>
      new URL(request.url, 'http://identity').searchParams.get('objectType') === 'wide'
        ? scriptedAuditPage(new Array(50).fill(1.5))
        : scriptedAuditPage([scriptedAuditRow(0), scriptedAuditRow(1)]),
  };

  it('is UPSTREAM_INVALID_RESPONSE for its field, none of its rows read; a deferred sibling keeps its data', async () => {
    upstream.answerNext('audit', byFilter, byFilter);
    const query = `{
      ok: auditEvents(first: 3, filter: { objectType: "ok" }) ${UUIDS}
      ... @defer { wide: auditEvents(first: 3, filter: { objectType: "wide" }) ${UUIDS} }
    }`;
    const response = await gw.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({ query }),
    });
    const parts: IncrementalPart[] = [];
    for await (const part of multipartParts(response)) parts.push(part);

    expect(parts[0]!.data).toEqual({
      ok: { edges: [0, 1].map((i) => ({ node: { uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` } })) },
    });
    const deferred = parts.slice(1).flatMap((part) => part.incremental ?? []);
    expect(deferred.map((item) => item.errors?.map((error) => [error.path, error.extensions?.code]))).toEqual([
      [[['wide'], 'UPSTREAM_INVALID_RESPONSE']],
    ]);
    expect(upstream.requests('audit')).toHaveLength(2);
    const failure = gw.logs().find((line) => line.msg === 'upstream call failed');
    expect(failure).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', route: 'audit-report' });
    expect(JSON.stringify(failure)).toMatch(/50 rows where pageSize \d+ was asked/);
    expect(gw.logs().some((line) => line.msg === 'audit rows with unreadable records kept in place')).toBe(false);
  });
});
