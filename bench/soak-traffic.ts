/**
 * The soak's request mix, open loop at a fixed rate: small and large audit pages that follow their
 * cursors, `updateSessionFiles` of sessions that exist and that do not, `_entities`, `@stream`
 * pages (some abandoned after their first part), APQ, and documents and cursors that are invalid.
 * Every answer is tallied by status and by error code; an error without a code is counted apart.
 */
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { SESSION_IDS } from '../simulator/index.js';
import { API_KEY } from './processes.js';

export interface Tally {
  readonly statuses: Record<string, number>;
  readonly codes: Record<string, number>;
  /** "kind status code" -> count, for the report. */
  readonly byKind: Record<string, number>;
  codeless: number;
  unanswered: number;
  abandoned: number;
  /** Requests not sent because too many were still in flight. */
  skipped: number;
  longestMs: number;
  longestKind: string;
  /** Durations of answered requests, ms, by kind (for percentiles). */
  readonly durations: Record<string, number[]>;
  /** The same, by the fault phase the request started in. */
  readonly durationsByPhase: Record<string, number[]>;
  /** The slowest answered requests, slowest first, by the x-request-id they were sent with. */
  readonly slowest: SlowRequest[];
  /** Every request sent, by its x-request-id: its kind and the phase it started in. */
  readonly sent: Map<string, { readonly kind: string; readonly phase: string }>;
  /** Examples of codeless errors and 5xx answers, for the report. */
  readonly examples: string[];
}

export const newTally = (): Tally => ({
  statuses: {},
  codes: {},
  byKind: {},
  codeless: 0,
  unanswered: 0,
  abandoned: 0,
  skipped: 0,
  longestMs: 0,
  longestKind: '',
  durations: {},
  durationsByPhase: {},
  slowest: [],
  sent: new Map(),
  examples: [],
});

export interface SlowRequest {
  readonly requestId: string;
  readonly kind: string;
  readonly phase: string;
  readonly ms: number;
}
const SLOWEST_KEPT = 10;

const bump = (counts: Record<string, number>, key: string, by = 1) => void (counts[key] = (counts[key] ?? 0) + by);

const RECORD = '__typename ... on AuditRecord { uuid timestamp objectType objectAction actor { userName } }';
const PAGE = `query Page($first: Int, $after: String, $filter: AuditEventFilter) {
  auditEvents(first: $first, after: $after, filter: $filter) { pageInfo { hasNextPage endCursor } edges { cursor node { ${RECORD} } } } }`;
const COUNTED_PAGE = `query Counted($first: Int, $after: String, $filter: AuditEventFilter) {
  auditEvents(first: $first, after: $after, filter: $filter) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${RECORD} } } } }`;
const LARGE_PAGE = `query Large($first: Int, $filter: AuditEventFilter) {
  auditEvents(first: $first, filter: $filter) { pageInfo { hasNextPage endCursor } edges { cursor node { __typename ... on AuditRecord { uuid } } } } }`;
const STREAMED_PAGE = `query Streamed($first: Int, $filter: AuditEventFilter) {
  auditEvents(first: $first, filter: $filter) { edges @stream(initialCount: 10) { cursor node { ${RECORD} } }
    ... @defer { pageInfo { hasNextPage endCursor } } } }`;
const FILES = `query Files($id: ID!) { updateSessionFiles(updateSessionId: $id) { name status size } }`;
const ENTITIES = `query Entities($r: [_Any!]!) { _entities(representations: $r) { ... on UpdateSession { id files { name status } } } }`;
const APQ_DOCUMENTS = [
  `query ApqSessions { a: updateSessionFiles(updateSessionId: "${SESSION_IDS.ready}") { name } }`,
  `query ApqLogins { auditEvents(first: 5, filter: { objectType: "LOGIN" }) { edges { cursor } } }`,
];
const INVALID_DOCUMENTS = [
  '{ auditEvents(first: 5) { edges { cursor } }',
  '{ auditEvents(first: 5) { nothingHere } }',
  'query { updateSessionFiles { name } }',
  '{ __typename'.repeat(3),
];

const OBJECT_TYPES = [null, 'LOGIN', 'LAUNCH', 'User', 'RuleSet'];
const HOUR = 3_600_000;

interface Answer {
  readonly status: number;
  /** extensions.code of every error, null for an error without one. */
  readonly codes: (string | null)[];
  readonly data?: unknown;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

/** The errors of a JSON body, of every part of a multipart one, or one codeless error for a body that is neither. */
function answerOf(status: number, contentType: string, text: string): Answer {
  const bodies: string[] = [];
  if (contentType.startsWith('multipart/mixed')) {
    for (const part of text.split(/\r\n-{3,}/)) {
      const start = part.indexOf('\r\n\r\n');
      if (start >= 0 && part.slice(start + 4).trim()) bodies.push(part.slice(start + 4).trim());
    }
  } else bodies.push(text);
  const codes: (string | null)[] = [];
  let data: unknown;
  for (const body of bodies) {
    let json: { data?: unknown; errors?: { extensions?: { code?: unknown } }[]; incremental?: { errors?: { extensions?: { code?: unknown } }[] }[] };
    try {
      json = JSON.parse(body) as typeof json;
    } catch {
      codes.push(null);
      continue;
    }
    data ??= json.data;
    const errors = [...(json.errors ?? []), ...(json.incremental ?? []).flatMap((part) => part.errors ?? [])];
    for (const error of errors) codes.push(typeof error.extensions?.code === 'string' ? error.extensions.code : null);
  }
  return { status, codes, data };
}

export interface TrafficOptions {
  readonly url: string;
  readonly tally: Tally;
  /** A client gives up on a request after this long (counted unanswered). */
  readonly clientTimeoutMs: number;
  readonly maxInFlight: number;
  /** The fault phase of the moment, to say where the longest request started. */
  readonly phase: () => string;
}

export function createTraffic(options: TrafficOptions) {
  const { url, tally } = options;
  const cursors: string[] = [];
  let inFlight = 0;
  let sent = 0;

  const record = (kind: string, answer: Answer, ms: number, note: string, phase: string, requestId: string) => {
    bump(tally.statuses, String(answer.status));
    (tally.durations[kind] ??= []).push(ms);
    (tally.durationsByPhase[phase] ??= []).push(ms);
    if (tally.slowest.length < SLOWEST_KEPT || ms > tally.slowest.at(-1)!.ms) {
      tally.slowest.push({ requestId, kind, phase, ms });
      tally.slowest.sort((a, b) => b.ms - a.ms).splice(SLOWEST_KEPT);
    }
    if (ms > tally.longestMs) {
      tally.longestMs = ms;
      tally.longestKind = `${kind}, started in "${phase}"`;
    }
    if (answer.codes.length === 0) bump(tally.byKind, `${kind} ${answer.status} OK`);
    for (const code of answer.codes) {
      bump(tally.byKind, `${kind} ${answer.status} ${code ?? '(no code)'}`);
      if (code === null) tally.codeless++;
      else bump(tally.codes, code);
    }
    if ((answer.status >= 500 || answer.codes.includes(null) || answer.codes.includes('INTERNAL_SERVER_ERROR')) && tally.examples.length < 20) {
      tally.examples.push(`${kind} ${answer.status}: ${note}`);
    }
  };

  /** POSTs a GraphQL request; `abandonAfterFirstChunk` drops the connection once the first bytes are in. */
  async function post(kind: string, body: unknown, accept = 'application/graphql-response+json, application/json', abandonAfterFirstChunk = false): Promise<Answer | undefined> {
    const started = Date.now();
    const phase = options.phase();
    const requestId = `soak-${++sent}`;
    tally.sent.set(requestId, { kind, phase });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.clientTimeoutMs);
    inFlight++;
    try {
      const res = await request(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, 'x-api-key': API_KEY, 'x-request-id': requestId },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      if (abandonAfterFirstChunk) {
        for await (const _chunk of res.body) break;
        controller.abort();
        res.body.destroy();
        tally.abandoned++;
        return undefined;
      }
      const text = await res.body.text();
      const answer = answerOf(res.statusCode, String(res.headers['content-type'] ?? ''), text);
      record(kind, answer, Date.now() - started, text.slice(0, 300), phase, requestId);
      return answer;
    } catch (error) {
      tally.unanswered++;
      const ms = Date.now() - started;
      if (ms > tally.longestMs) {
        tally.longestMs = ms;
        tally.longestKind = `${kind} (unanswered), started in "${phase}"`;
      }
      if (tally.examples.length < 20) tally.examples.push(`${kind} unanswered after ${ms} ms: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    } finally {
      clearTimeout(timer);
      inFlight--;
    }
  }

  const randomFilter = () => {
    const objectType = pick(OBJECT_TYPES);
    const to = Date.now() - Math.floor(Math.random() * 48) * HOUR;
    const window = Math.random() < 0.5 ? {} : { from: new Date(to - (1 + Math.floor(Math.random() * 12)) * HOUR).toISOString(), to: new Date(to).toISOString() };
    return objectType === null ? window : { ...window, objectType };
  };

  const keepCursor = (answer: Answer | undefined) => {
    const page = (answer?.data as { auditEvents?: { pageInfo?: { hasNextPage: boolean; endCursor: string | null } } } | undefined)?.auditEvents;
    if (page?.pageInfo?.hasNextPage && page.pageInfo.endCursor) {
      cursors.push(page.pageInfo.endCursor);
      if (cursors.length > 200) cursors.splice(0, cursors.length - 200);
    }
  };

  const kinds: [weight: number, name: string, run: () => Promise<unknown>][] = [
    [24, 'page', async () => {
      const after = cursors.length > 0 && Math.random() < 0.6 ? cursors.splice(Math.floor(Math.random() * cursors.length), 1)[0] : undefined;
      const query = Math.random() < 0.15 ? COUNTED_PAGE : PAGE;
      keepCursor(await post('page', { query, variables: after ? { first: 20, after } : { first: 20, filter: randomFilter() } }));
    }],
    [3, 'large-page', async () => keepCursor(await post('large-page', { query: LARGE_PAGE, variables: { first: pick([1000, 2500, 5000]), filter: randomFilter() } }))],
    [8, 'files', () => post('files', { query: FILES, variables: { id: pick(Object.values(SESSION_IDS)) } })],
    [4, 'files-missing', () => post('files-missing', { query: FILES, variables: { id: `missing-${Math.floor(Math.random() * 1e6)}` } })],
    [5, 'entities', () =>
      post('entities', {
        query: ENTITIES,
        variables: { r: [SESSION_IDS.mixed, SESSION_IDS.ready, 'no-such-session'].map((id) => ({ __typename: 'UpdateSession', id })) },
      })],
    [7, 'stream', async () => {
      const abandon = Math.random() < 0.35;
      const kind = abandon ? 'stream-abandoned' : 'stream';
      await post(kind, { query: STREAMED_PAGE, variables: { first: pick([50, 300, 1200]), filter: randomFilter() } }, 'multipart/mixed', abandon);
    }],
    [5, 'apq', async () => {
      const query = pick(APQ_DOCUMENTS);
      const persistedQuery = { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') };
      const first = await post('apq', { extensions: { persistedQuery } });
      if (first?.codes.includes('PERSISTED_QUERY_NOT_FOUND')) await post('apq-register', { query, extensions: { persistedQuery } });
    }],
    [2, 'invalid-document', () => post('invalid-document', { query: pick(INVALID_DOCUMENTS) })],
    [2, 'invalid-cursor', () => {
      const real = cursors.at(-1) ?? 'AwA';
      const after = pick([real.slice(0, Math.max(1, Math.floor(Math.random() * real.length))), `${real}x`, 'bm90LWEtY3Vyc29y', real.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))]);
      return post('invalid-cursor', { query: PAGE, variables: { first: 5, after } });
    }],
  ];
  const total = kinds.reduce((sum, [weight]) => sum + weight, 0);

  /** Starts one request of a kind drawn by weight, unless too many are in flight; never rejects. */
  return {
    fire(): Promise<unknown> {
      if (inFlight >= options.maxInFlight) {
        tally.skipped++;
        return Promise.resolve();
      }
      let draw = Math.random() * total;
      const [, , run] = kinds.find(([weight]) => (draw -= weight) < 0) ?? kinds[0]!;
      return run().catch((error: unknown) => {
        tally.examples.push(`soak client error: ${error instanceof Error ? error.stack : String(error)}`);
      });
    },
    inFlight: () => inFlight,
  };
}
