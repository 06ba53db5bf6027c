/**
 * `GET /analytics/reports/audit/` (spec 4.2). Rows newest first, no total, no next link; the self
 * link echoes the effective query. pageSize above 5000 is clamped to 5000 (not refused); a
 * parameter that is not an integer, pageSize < 1 or startIndex < 0 answers 400.
 */
import { bearerToken, jsonAnswer, parseInteger, rawJsonAnswer, type Answer, type RequestContext } from './http-util.js';
import type { SimulatorState } from './state.js';
import type { AuditQuery } from './audit-store.js';
import type { AuditEventFilter } from './types.js';

export const AUDIT_HEADER = ['reports.dateAndTime', 'reports.userDomain', 'reports.Event', 'reports.object', ''];
export const MAX_PAGE_SIZE = 5000;
export const DEFAULT_WINDOW_MS = 72 * 60 * 60 * 1000;
export const AUDIT_PATH = '/analytics/reports/audit/';

/** Time window defaults as the endpoint applies them: toMillis = now, fromMillis = now - 72 h. */
export function withDefaults(filter: AuditEventFilter, now: number): AuditQuery {
  return {
    fromMillis: filter.fromMillis ?? now - DEFAULT_WINDOW_MS,
    toMillis: filter.toMillis ?? now,
    objectType: filter.objectType,
    action: filter.action,
    startIndex: 0,
    pageSize: Number.POSITIVE_INFINITY,
  };
}

type Parsed = { ok: true; query: AuditQuery } | { ok: false; message: string };

function parseQuery(params: URLSearchParams, now: number): Parsed {
  const integers: Record<string, number | undefined> = {};
  for (const name of ['fromMillis', 'toMillis', 'pageSize', 'startIndex']) {
    const text = params.get(name);
    if (text === null || text === '') continue;
    const value = parseInteger(text.trim());
    if (value === undefined) return { ok: false, message: `${name} must be an integer.` };
    integers[name] = value;
  }
  const pageSize = Math.min(integers['pageSize'] ?? MAX_PAGE_SIZE, MAX_PAGE_SIZE);
  const startIndex = integers['startIndex'] ?? 0;
  if (pageSize < 1) return { ok: false, message: `pageSize must be between 1 and ${MAX_PAGE_SIZE}.` };
  if (startIndex < 0) return { ok: false, message: 'startIndex must not be negative.' };
  const filter: AuditEventFilter = {
    fromMillis: integers['fromMillis'],
    toMillis: integers['toMillis'],
    objectType: params.get('objectType') || undefined,
    action: params.get('action') || undefined,
  };
  return { ok: true, query: { ...withDefaults(filter, now), pageSize, startIndex } };
}

function selfHref(q: AuditQuery): string {
  const params = new URLSearchParams({ fromMillis: String(q.fromMillis), toMillis: String(q.toMillis) });
  if (q.objectType !== undefined) params.set('objectType', q.objectType);
  if (q.action !== undefined) params.set('action', q.action);
  params.set('pageSize', String(q.pageSize));
  params.set('startIndex', String(q.startIndex));
  return `${AUDIT_PATH}?${params.toString()}`;
}

export function handleAudit(ctx: RequestContext, state: SimulatorState): Answer {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
    return jsonAnswer(405, { error: 'method_not_allowed', error_description: 'Use GET.' }, { allow: 'GET' });
  }
  const token = bearerToken(ctx.headers);
  if (token === undefined || !state.tokens.isValidAccessToken(token)) {
    const description = token === undefined ? 'Bearer token required.' : 'Invalid or expired access token.';
    return jsonAnswer(401, { error: 'invalid_token', error_description: description }, {
      'www-authenticate': 'Bearer error="invalid_token"',
    });
  }
  const parsed = parseQuery(ctx.url.searchParams, state.now());
  if (!parsed.ok) return jsonAnswer(400, { error: 'invalid_request', error_description: parsed.message });

  // Rows are pre-serialized; only the envelope is assembled here, so 5000 rows stay cheap.
  const rows = parsed.query.pageSize > 1 && state.faults.takeInconsistentPage() ? [] : state.audit.rows(parsed.query);
  const body =
    `{"header":${JSON.stringify(AUDIT_HEADER)},"data":[${rows.join(',')}],` +
    `"_links":{"self":{"href":${JSON.stringify(selfHref(parsed.query))}}},"headerArg":["","","","",""]}`;
  return rawJsonAnswer(200, body);
}
