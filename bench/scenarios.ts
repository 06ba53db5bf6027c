/**
 * What the floor, the gateway and the reference server are asked: the same rows of the same pinned
 * window. The floor is a hand-written client: its own token once, the raw audit report, JSON.parse
 * of the envelope and of every row's record. The gateway client sends the equivalent auditEvents
 * query and JSON.parses the answer; the reference server (bare Yoga + jit) gets the same request.
 * Each checks the row count of every answer.
 */
import { Pool, request } from 'undici';
import type { Send } from './load.js';
import { API_KEY } from './processes.js';

const HOUR = 3_600_000;

/** Both ends in the past: a closed window, identical for floor and gateway. */
export interface Window {
  readonly fromMillis: number;
  readonly toMillis: number;
}

/** The simulator seeds 24,000 events over the 72 h before its start: this 58 h holds about 19,000. */
export function pinnedWindow(simulatorStartedAt: number): Window {
  const second = (ms: number) => Math.floor(ms / 1000) * 1000;
  return { fromMillis: second(simulatorStartedAt - 60 * HOUR), toMillis: second(simulatorStartedAt - 2 * HOUR) };
}

/** Every AuditRecord field, as a dashboard listing the events would select them. */
export const AUDIT_QUERY = /* GraphQL */ `
  query BenchAuditEvents($first: Int!, $from: DateTime!, $to: DateTime!) {
    auditEvents(first: $first, filter: { from: $from, to: $to }) {
      window { from to }
      pageInfo { hasNextPage endCursor }
      edges {
        node {
          __typename
          ... on AuditRecord {
            uuid baseType timestamp organizationId tenantId
            actor { id userName domain uuid }
            clientId deviceId workspaceId sourceIp
            objectType objectId objectName objectAction values
          }
          ... on LoginEvent { success authMethods }
        }
      }
    }
  }
`;

interface GatewayAnswer {
  data?: { auditEvents?: { edges: { node: { uuid: string } }[] } | null } | null;
  errors?: { message: string }[];
}

interface ReportAnswer {
  data: unknown[][];
}

/** Content-Length when sent (free), else the text's length (close enough: the bodies are ASCII). */
const bodySize = (headers: Record<string, string | string[] | undefined>, text: string) =>
  Number(headers['content-length'] ?? text.length);

export function keepAlivePool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
}

/** POST /graphql: the whole body read and JSON.parsed, like any client. */
async function gatewayPage(pool: Pool, body: string): Promise<{ count: number; uuids: string[]; bytes: number }> {
  const res = await pool.request({
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': API_KEY },
    body,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`gateway answered ${res.statusCode}: ${text.slice(0, 300)}`);
  const answer = JSON.parse(text) as GatewayAnswer;
  if (answer.errors?.length) throw new Error(`gateway errors: ${answer.errors[0]!.message}`);
  const edges = answer.data?.auditEvents?.edges ?? [];
  const uuids = [edges[0]?.node.uuid ?? '', edges[edges.length - 1]?.node.uuid ?? ''];
  return { count: edges.length, uuids, bytes: bodySize(res.headers, text) };
}

function gatewayBody(rows: number, window: Window): string {
  return JSON.stringify({
    query: AUDIT_QUERY,
    operationName: 'BenchAuditEvents',
    variables: { first: rows, from: new Date(window.fromMillis).toISOString(), to: new Date(window.toMillis).toISOString() },
  });
}

/** AUDIT_QUERY to a GraphQL server: the gateway, or the reference server (which ignores the API key). */
export function gatewaySend(pool: Pool, rows: number, window: Window): Send {
  const body = gatewayBody(rows, window);
  return async () => {
    const page = await gatewayPage(pool, body);
    if (page.count !== rows) throw new Error(`gateway: ${page.count} rows, expected ${rows}`);
    return page.bytes;
  };
}

/** The audit report path the floor reads: the first `rows` rows of the window. */
function reportPath(rows: number, window: Window, startIndex = 0): string {
  return `/analytics/reports/audit/?pageSize=${rows}&startIndex=${startIndex}&fromMillis=${window.fromMillis}&toMillis=${window.toMillis}`;
}

/** GET the report, JSON.parse the envelope and every row's record (row[4]). */
async function reportPage(pool: Pool, path: string, token: string): Promise<{ records: { uuid: string }[]; bytes: number }> {
  const res = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`audit report answered ${res.statusCode}: ${text.slice(0, 300)}`);
  const report = JSON.parse(text) as ReportAnswer;
  const records = new Array<{ uuid: string }>(report.data.length);
  for (let i = 0; i < report.data.length; i++) records[i] = JSON.parse(report.data[i]![4] as string) as { uuid: string };
  return { records, bytes: bodySize(res.headers, text) };
}

export function floorSend(pool: Pool, rows: number, window: Window, token: string): Send {
  const path = reportPath(rows, window);
  return async () => {
    const page = await reportPage(pool, path, token);
    if (page.records.length !== rows) throw new Error(`floor: ${page.records.length} rows, expected ${rows}`);
    return page.bytes;
  };
}

/** Before measuring: the gateway and the floor read the same page (same count, same first and last uuid). */
export async function checkSameRows(gateway: Pool, floor: Pool, rows: number, window: Window, token: string): Promise<void> {
  const [g, f] = await Promise.all([gatewayPage(gateway, gatewayBody(rows, window)), reportPage(floor, reportPath(rows, window), token)]);
  const floorUuids = [f.records[0]?.uuid ?? '', f.records[f.records.length - 1]?.uuid ?? ''];
  if (f.records.length !== rows || g.count !== rows || g.uuids.join() !== floorUuids.join()) {
    throw new Error(`gateway and floor read different rows for ${rows}: ${g.uuids.join('..')} vs ${floorUuids.join('..')} (${f.records.length} floor rows)`);
  }
}

/** Before measuring the reference server: it reads the gateway's page (same count, same first and last uuid). */
export async function checkReferenceRows(gateway: Pool, reference: Pool, rows: number, window: Window): Promise<void> {
  const body = gatewayBody(rows, window);
  const [g, r] = await Promise.all([gatewayPage(gateway, body), gatewayPage(reference, body)]);
  if (r.count !== rows || g.count !== rows || r.uuids.join() !== g.uuids.join()) {
    throw new Error(`gateway and reference server read different rows for ${rows}: ${g.uuids.join('..')} vs ${r.uuids.join('..')} (${r.count} reference rows)`);
  }
}

/** The window must hold more rows than the largest page, so every page is full. */
export async function windowHasRows(pool: Pool, window: Window, token: string, rows: number): Promise<boolean> {
  const page = await reportPage(pool, reportPath(1, window, rows), token);
  return page.records.length === 1;
}

/** POST /SAAS/auth/oauthtoken, client_credentials with HTTP Basic: the floor's one token. */
export async function fetchToken(simulatorUrl: string, client: { id: string; secret: string }): Promise<string> {
  const res = await request(`${simulatorUrl}/SAAS/auth/oauthtoken`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  const answer = (await res.body.json()) as { access_token?: string };
  if (res.statusCode !== 200 || !answer.access_token) throw new Error(`token request answered ${res.statusCode}`);
  return answer.access_token;
}

export interface Counters {
  token: number;
  tokenByGrant: Record<string, number>;
  audit: number;
}

export async function simulatorCounters(simulatorUrl: string): Promise<Counters> {
  const res = await request(`${simulatorUrl}/__simulator/counters`);
  return (await res.body.json()) as Counters;
}
