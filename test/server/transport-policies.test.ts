/**
 * Every access policy over every transport: the same request, sent as an HTTP GET, an HTTP POST,
 * a graphql-sse POST (text/event-stream), a plain text/event-stream GET and a graphql-transport-ws
 * WebSocket operation, gets the same decision: run, or refused with the same code. CSRF protection
 * applies to what a browser sends without a preflight: the GETs.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestIssuer } from '../helpers/jwt-issuer.js';
import { RawWebSocket } from '../helpers/websocket-frame.js';
import { API_KEY, startLiveServer, type LiveServer } from '../live/live-server.js';

type Params = { query: string; variables?: Record<string, unknown>; extensions?: Record<string, unknown> };
type Body = { data?: unknown; errors?: { extensions?: { code?: string } }[] };
/** `allowed`, or the code of the first error. */
type Decision = string;

const decisionOf = (body: Body | undefined): Decision =>
  body?.errors?.length ? (body.errors[0]!.extensions?.code ?? 'NO_CODE') : body?.data ? 'allowed' : 'NO_ANSWER';

/** What a browser's cross-site GET cannot send, so the GETs below pass CSRF protection unless a case leaves it out. */
const PREFLIGHT = { 'x-graphql-yoga-csrf': '1' };

function searchOf(params: Params): string {
  const search = new URLSearchParams({ query: params.query });
  if (params.variables) search.set('variables', JSON.stringify(params.variables));
  if (params.extensions) search.set('extensions', JSON.stringify(params.extensions));
  return search.toString();
}

/** The body of a JSON answer, or the first `next` event of an event stream. */
async function answerOf(response: Response): Promise<Body | undefined> {
  const text = await response.text();
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return JSON.parse(text) as Body;
  const data = /event: next\ndata: (.*)\n/.exec(text)?.[1];
  return data ? (JSON.parse(data) as Body) : undefined;
}

type Transport = (server: LiveServer, params: Params, headers: Record<string, string>) => Promise<Decision>;

const overWebSocket: Transport = async (server, params, headers) => {
  const socket = new RawWebSocket(Number(new URL(server.url).port));
  try {
    socket.sendMessage({ type: 'connection_init', payload: headers });
    const acknowledged = () => socket.messages.some((m) => (m as { type: string }).type === 'connection_ack');
    await socket.until(() => acknowledged() || socket.closeFrame !== undefined);
    if (!acknowledged()) return socket.closeFrame?.code === 4403 ? 'UNAUTHENTICATED' : `CLOSED_${socket.closeFrame?.code}`;
    socket.sendMessage({ id: 'op', type: 'subscribe', payload: { ...params } });
    const answered = () => socket.messages.find((m) => ['next', 'error'].includes((m as { type: string }).type)) as { type: string; payload: unknown } | undefined;
    await socket.until(() => answered() !== undefined, 10_000);
    const { type, payload } = answered()!;
    return decisionOf(type === 'error' ? { errors: payload as Body['errors'] } : (payload as Body));
  } finally {
    socket.socket.destroy();
  }
};

const transports: [string, Transport][] = [
  [
    'HTTP GET',
    async (server, params, headers) =>
      decisionOf(await answerOf(await fetch(`${server.url}?${searchOf(params)}`, { headers: { accept: 'application/json', ...headers } }))),
  ],
  [
    'HTTP POST',
    async (server, params, headers) =>
      decisionOf(
        await answerOf(
          await fetch(server.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
            body: JSON.stringify(params),
          }),
        ),
      ),
  ],
  [
    'graphql-sse POST',
    async (server, params, headers) =>
      decisionOf(
        await answerOf(
          await fetch(server.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
            body: JSON.stringify(params),
          }),
        ),
      ),
  ],
  [
    'text/event-stream GET',
    async (server, params, headers) =>
      decisionOf(await answerOf(await fetch(`${server.url}?${searchOf(params)}`, { headers: { accept: 'text/event-stream', ...headers } }))),
  ],
  ['WebSocket', overWebSocket],
];

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const LISTED = '{ __typename }';
const NOT_LISTED = '{ auditEvents(first: 1) { totalCount } }';
const INTROSPECTION = '{ __schema { queryType { name } } }';
const aliases = (count: number, field: string) => Array.from({ length: count }, (_, i) => `a${i}: ${field}`).join(' ');
const messageParams = (depth: number): string =>
  `params { key value { dt s d precision format i ${depth > 0 ? `l { id ${messageParams(depth - 1)} }` : ''} } }`;

const issuer = new TestIssuer();
const servers: Record<'keys' | 'persisted' | 'anonymous' | 'noIntrospection', LiveServer> = {} as never;
beforeAll(async () => {
  await issuer.start();
  const directory = mkdtempSync(join(tmpdir(), 'transport-policies-'));
  const manifest = join(directory, 'operations.json');
  writeFileSync(manifest, JSON.stringify({ [sha256(LISTED)]: LISTED }));
  [servers.keys, servers.persisted, servers.anonymous, servers.noIntrospection] = await Promise.all([
    startLiveServer({ env: { GATEWAY_JWT_JWKS_URL: issuer.url } }),
    startLiveServer({ env: { PERSISTED_OPERATIONS_FILE: manifest, PERSISTED_OPERATIONS_ONLY: 'true' } }),
    startLiveServer({ env: { GATEWAY_ALLOW_ANONYMOUS: 'true' } }),
    startLiveServer({ env: { GRAPHQL_INTROSPECTION: 'false' } }),
  ]);
}, 30_000);
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()));
  await issuer.close();
});

const key = { 'x-api-key': API_KEY };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Case {
  readonly server: keyof typeof servers;
  readonly params: Params;
  readonly headers: () => Record<string, string>;
  readonly decision: Decision;
  /** Where a transport decides otherwise, by design. */
  readonly except?: Record<string, Decision>;
}

const cases: Record<string, Case> = {
  'no API key': { server: 'keys', params: { query: LISTED }, headers: () => ({}), decision: 'UNAUTHENTICATED' },
  'a wrong API key': { server: 'keys', params: { query: LISTED }, headers: () => ({ 'x-api-key': 'wrong' }), decision: 'UNAUTHENTICATED' },
  'the right API key': { server: 'keys', params: { query: LISTED }, headers: () => key, decision: 'allowed' },
  'a valid JWT': { server: 'keys', params: { query: LISTED }, headers: () => bearer(issuer.token({ sub: 'alice' })), decision: 'allowed' },
  'an expired JWT': {
    server: 'keys',
    params: { query: LISTED },
    headers: () => bearer(issuer.token({ sub: 'alice', exp: Math.floor(Date.now() / 1000) - 60 })),
    decision: 'UNAUTHENTICATED',
  },
  'persisted-only: an operation not in the list': {
    server: 'persisted',
    params: { query: NOT_LISTED },
    headers: () => key,
    decision: 'PERSISTED_QUERY_ONLY',
  },
  'persisted-only: introspection not in the list': {
    server: 'persisted',
    params: { query: INTROSPECTION },
    headers: () => key,
    decision: 'PERSISTED_QUERY_ONLY',
  },
  'persisted-only: a live subscription not in the list': {
    server: 'persisted',
    params: { query: 'subscription { auditEventAdded { resumeAfter } }' },
    headers: () => key,
    decision: 'PERSISTED_QUERY_ONLY',
  },
  'persisted-only: a listed operation by its hash': {
    server: 'persisted',
    params: { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: sha256(LISTED) } } },
    headers: () => key,
    decision: 'allowed',
  },
  'introspection `authenticated`, anonymous caller': {
    server: 'anonymous',
    params: { query: INTROSPECTION },
    headers: () => ({}),
    decision: 'GRAPHQL_VALIDATION_FAILED',
  },
  'introspection `authenticated`, caller with a key': { server: 'anonymous', params: { query: INTROSPECTION }, headers: () => key, decision: 'allowed' },
  'introspection `off`, caller with a key': {
    server: 'noIntrospection',
    params: { query: INTROSPECTION },
    headers: () => key,
    decision: 'GRAPHQL_VALIDATION_FAILED',
  },
  'too many aliases': { server: 'keys', params: { query: `{ ${aliases(31, 'updateSession(id: "s") { id }')} }` }, headers: () => key, decision: 'GRAPHQL_VALIDATION_FAILED' },
  'too deep': {
    server: 'keys',
    params: { query: `{ updateSessionFiles(updateSessionId: "s") { errorMessage { ${messageParams(8)} } } }` },
    headers: () => key,
    decision: 'GRAPHQL_VALIDATION_FAILED',
  },
  'over the audit-row budget, by variables': {
    server: 'keys',
    params: { query: `query Big($n: Int = 1) { ${aliases(3, 'auditEvents(first: $n) { totalCount }')} }`, variables: { n: 5000 } },
    headers: () => key,
    decision: 'GRAPHQL_VALIDATION_FAILED',
  },
  'no CSRF preflight header, anonymous caller': {
    server: 'anonymous',
    params: { query: LISTED },
    headers: () => ({}),
    decision: 'allowed',
    except: { 'HTTP GET': 'BAD_REQUEST', 'text/event-stream GET': 'BAD_REQUEST' },
  },
};

describe.each(Object.entries(cases))('%s', (name, policy) => {
  it.each(transports)('is decided alike over %s', async (transport, send) => {
    const csrfCase = name.startsWith('no CSRF');
    const isGet = transport.endsWith('GET');
    const headers = { ...(isGet && !csrfCase ? PREFLIGHT : {}), ...policy.headers() };
    const expected = policy.except?.[transport] ?? policy.decision;
    expect(await send(servers[policy.server], policy.params, headers)).toBe(expected);
  });
});
