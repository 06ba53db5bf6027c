import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const ERROR = 50;
const WARN = 40;

describe('one access line per request, each error once at the right level', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ env: { GATEWAY_API_KEYS: 'key-alpha', GATEWAY_ALLOW_ANONYMOUS: 'false' } });
  });
  afterAll(() => gateway.close());

  /** The lines written for one request, found by the request id the test sends. */
  async function linesOf(requestId: string, path: string, init: RequestInit & { headers?: Record<string, string> }) {
    const response = await gateway.fetch(path, { ...init, headers: { ...init.headers, 'x-request-id': requestId } });
    await response.arrayBuffer();
    const lines = gateway.logs().filter((l) => l.requestId === requestId || JSON.stringify(l).includes(requestId));
    const others = gateway.logs().filter((l) => (l.level as number) >= WARN && !l.requestId);
    return { response, lines, access: lines.filter((l) => l.msg === 'request'), others };
  }
  const graphql = (query: string, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });

  it('logs a request that makes no upstream call: method, path, status, duration, operation, caller, id', async () => {
    const { access } = await linesOf('req-typename', '/graphql', graphql('query Ping { __typename }', { 'x-api-key': 'key-alpha' }));
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({
      level: 30,
      method: 'POST',
      path: '/graphql',
      status: 200,
      operationName: 'Ping',
      caller: 'api-key:0',
      requestId: 'req-typename',
    });
    expect(typeof access[0]!.durationMs).toBe('number');
  });

  it('carries the caller\'s trace id when a traceparent comes with the request', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const { access } = await linesOf('req-traced', '/graphql', graphql('{ __typename }', { 'x-api-key': 'key-alpha', traceparent }));
    expect(access[0]).toMatchObject({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
    const { access: untraced } = await linesOf('req-bad-trace', '/graphql', graphql('{ __typename }', { 'x-api-key': 'key-alpha', traceparent: 'garbage' }));
    expect(untraced[0]!.trace_id).toBeUndefined();
  });

  it('logs a refused caller once, as an access line with its code, and nothing at error', async () => {
    const before = gateway.logs().length;
    const { access, lines } = await linesOf('req-401', '/graphql', graphql('{ __typename }'));
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ status: 401, caller: 'anonymous', errors: ['UNAUTHENTICATED'] });
    expect(lines.filter((l) => (l.level as number) >= WARN)).toHaveLength(0);
    expect(gateway.logs().slice(before).filter((l) => (l.level as number) >= ERROR)).toHaveLength(0);
  });

  it('does not log a caller mistake (BAD_USER_INPUT) at error, nor with a stack', async () => {
    const before = gateway.logs().length;
    const { access, lines } = await linesOf(
      'req-bad-input',
      '/graphql',
      graphql('{ auditEvents(first: -1) { edges { cursor } } }', { 'x-api-key': 'key-alpha' }),
    );
    expect(access).toHaveLength(1);
    expect(access[0]!.errors).toEqual(['BAD_USER_INPUT']);
    const written = gateway.logs().slice(before);
    expect(written.filter((l) => (l.level as number) >= WARN)).toHaveLength(0);
    expect(JSON.stringify(written)).not.toMatch(/"stack"/);
    expect(lines.filter((l) => (l.level as number) >= 30 && l.msg !== 'request')).toHaveLength(1);
  });

  it('does not log a variable value the caller got wrong at warn or error, nor with a stack: the access line carries BAD_USER_INPUT', async () => {
    const query = 'query Page($filter: AuditEventFilter) { auditEvents(first: 1, filter: $filter) { totalCount } }';
    const wrongValues = [{ from: 'yesterday' }, { action: 'NOT_AN_ACTION' }, { unknownField: 1 }, { objectType: { nested: true } }];
    for (const [i, filter] of wrongValues.entries()) {
      const before = gateway.logs().length;
      const { access } = await linesOf(`req-bad-variable-${i}`, '/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'key-alpha' },
        body: JSON.stringify({ query, variables: { filter } }),
      });
      expect(access, JSON.stringify(filter)).toHaveLength(1);
      expect(access[0]).toMatchObject({ level: 30, operationName: 'Page', errors: ['BAD_USER_INPUT'] });
      const written = gateway.logs().slice(before);
      expect(written.filter((l) => (l.level as number) >= WARN), JSON.stringify(filter)).toHaveLength(0);
      expect(JSON.stringify(written)).not.toMatch(/"stack"/);
    }
  });

  it('answers and logs a variable that does not coerce the same once graphql-jit runs the operation', async () => {
    const wrong: [string, Record<string, unknown>][] = [
      ['query Dated($d: DateTime) { auditEvents(first: 1, filter: { to: $d }) { totalCount } }', { d: 'x' }],
      ['query Filtered($f: AuditEventFilter) { auditEvents(first: 1, filter: $f) { totalCount } }', { f: { action: 'DROP' } }],
      ['query Windowed($f: AuditEventFilter) { auditEvents(first: 1, filter: $f) { totalCount } }', { f: { from: 'yesterday' } }],
      // graphql-jit would take a list for an input object, and read the page of an empty filter.
      ['query Listed($f: AuditEventFilter) { auditEvents(first: 1, filter: $f) { totalCount } }', { f: [] }],
      ['query Sized($n: Int!) { auditEvents(first: $n) { totalCount } }', {}],
    ];
    for (const [i, [query, variables]] of wrong.entries()) {
      const answers: unknown[] = [];
      const before = gateway.logs().length;
      // The first time on graphql-js; compiled the second time, and served compiled the third.
      for (const send of [1, 2, 3]) {
        const requestId = `req-jit-variable-${i}-${send}`;
        const response = await gateway.fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'key-alpha', 'x-request-id': requestId },
          body: JSON.stringify({ query, variables }),
        });
        answers.push({ status: response.status, body: await response.json() });
        const access = gateway.logs().filter((l) => l.requestId === requestId && l.msg === 'request');
        expect(access, query).toMatchObject([{ level: 30, errors: ['BAD_USER_INPUT'] }]);
      }
      const written = gateway.logs().slice(before);
      expect(written.some((l) => l.msg === 'graphql-jit compiled the operation'), query).toBe(true);
      expect(answers[1], query).toEqual(answers[0]);
      expect(answers[2], query).toEqual(answers[0]);
      expect(JSON.stringify(answers[0])).toMatch(/"locations"/);
      expect(written.filter((l) => (l.level as number) >= WARN), query).toEqual([]);
      expect(JSON.stringify(written)).not.toMatch(/"stack"/);
    }
  });

  it('logs a refused subscription once, at info with its code, never at error or with a stack', async () => {
    const refused = [
      'subscription { auditEventAdded(since: "2000-01-01T00:00:00Z") { __typename } }',
      'subscription { auditEventAdded(resumeAfter: "not-a-token") { __typename } }',
      'subscription { auditEventAdded(resumeAfter: "x", since: "2026-01-01T00:00:00Z") { __typename } }',
    ];
    for (const [i, query] of refused.entries()) {
      const before = gateway.logs().length;
      const { response, access, lines } = await linesOf(`req-refused-subscription-${i}`, '/graphql', {
        ...graphql(query, { 'x-api-key': 'key-alpha' }),
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': 'key-alpha' },
      });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(access[0]).toMatchObject({ level: 30, errors: ['BAD_USER_INPUT'] });
      expect(lines.filter((l) => l.code === 'BAD_USER_INPUT').map((l) => l.level), query).toEqual([30]);
      const written = gateway.logs().slice(before);
      expect(written.filter((l) => (l.level as number) >= WARN), query).toHaveLength(0);
      expect(JSON.stringify(written)).not.toMatch(/"stack"/);
    }
  });

  it('does not log a CSRF refusal at error', async () => {
    const before = gateway.logs().length;
    const { response, access } = await linesOf('req-csrf', `/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'application/json' },
    });
    expect(response.status).toBe(403);
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ status: 403, path: '/graphql' });
    expect(JSON.stringify(access[0])).not.toContain('__typename');
    expect(gateway.logs().slice(before).filter((l) => (l.level as number) >= WARN)).toHaveLength(0);
  });

  it('logs an upstream failure once, as a warn line with its detail', async () => {
    gateway.sim.control.failNext(5, 500, { route: 'audit' });
    const before = gateway.logs().length;
    const { access, lines } = await linesOf(
      'req-upstream',
      '/graphql',
      graphql('{ auditEvents(first: 1) { edges { cursor } } }', { 'x-api-key': 'key-alpha' }),
    );
    expect(access[0]!.errors).toEqual(['UPSTREAM_UNAVAILABLE']);
    const errorLines = lines.filter((l) => l.code === 'UPSTREAM_UNAVAILABLE' && (l.level as number) >= 30);
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]!.level).toBe(WARN);
    expect(gateway.logs().slice(before).filter((l) => (l.level as number) >= ERROR)).toHaveLength(0);
  });

  it('keeps probes out of the info log', async () => {
    const before = gateway.logs().length;
    await gateway.fetch('/healthz');
    await gateway.fetch('/readyz');
    expect(gateway.logs().slice(before).filter((l) => (l.level as number) >= 30)).toHaveLength(0);
  });
});
