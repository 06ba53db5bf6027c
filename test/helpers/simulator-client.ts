/** Helpers for talking to the upstream simulator over real HTTP in tests. */
import { DEMO_CLIENT, DEMO_USER, type Simulator } from '../../simulator/index.js';

/** A fixed start time, so seeded data is the same on every run. */
export const FIXED_START = Date.UTC(2025, 5, 15, 12, 0, 0);
export const HOUR = 60 * 60 * 1000;

/** A clock tests move by hand. */
export function manualClock(start = FIXED_START) {
  let current = start;
  return {
    now: () => current,
    advance(ms: number) {
      current += ms;
    },
    set(ms: number) {
      current = ms;
    },
  };
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed body, or undefined when the body is not JSON. */
  json: unknown;
}

/** fetch with a deadline (a bound against a hang, well beyond a busy machine's slowest answer), returning status, headers and the body both raw and parsed. */
export async function http(url: string, init: RequestInit = {}, timeoutMs = 20_000): Promise<HttpResult> {
  const send = () => fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(timeoutMs) });
  // A GET is sent again once if its reused keep-alive connection was closed under it, as browsers do;
  // on a loaded machine the client's idle timer can fire after the server's.
  const res = await send().catch((error: unknown) => {
    const reset = (error as { cause?: { code?: string } }).cause?.code === 'ECONNRESET';
    if (reset && (init.method ?? 'GET') === 'GET') return send();
    throw error;
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export function tokenRequest(sim: Simulator, form: Record<string, string>, headers: Record<string, string> = {}, query = '') {
  return http(`${sim.url}/SAAS/auth/oauthtoken${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

export interface TokenAnswer {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** A client_credentials token for the demo client. */
export async function demoToken(sim: Simulator): Promise<TokenAnswer> {
  const res = await tokenRequest(sim, { grant_type: 'client_credentials' }, { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
  return res.json as TokenAnswer;
}

export function auditRequest(sim: Simulator, token: string | undefined, params: Record<string, string | number> = {}) {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  return http(`${sim.url}/analytics/reports/audit/${query ? `?${query}` : ''}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
}

export interface AuditBody {
  header: string[];
  data: [string, string | null, string | null, string | null, string][];
  _links: { self: { href: string } };
  headerArg: string[];
}

/** The uuid of each row, read from its record JSON (by pattern: corrupted records still have one). */
export function rowUuids(body: AuditBody): string[] {
  return body.data.map((row) => /"uuid":"([^"]+)"/.exec(row[4])?.[1] ?? '');
}

export function contentPath(sim: Simulator, vendor = 'vmware'): string {
  return `${sim.url}/rest/com/${vendor}`;
}

export async function demoSession(sim: Simulator, vendor = 'vmware'): Promise<string> {
  const res = await http(`${contentPath(sim, vendor)}/cis/session`, {
    method: 'POST',
    headers: { authorization: basic(DEMO_USER.username, DEMO_USER.password) },
  });
  if (res.status !== 200) throw new Error(`session login failed: ${res.status} ${res.text}`);
  return (res.json as { value: string }).value;
}

export function filesRequest(sim: Simulator, sessionId: string | undefined, updateSessionId?: string, vendor = 'vmware') {
  const query = updateSessionId === undefined ? '' : `?update_session_id=${encodeURIComponent(updateSessionId)}`;
  return http(`${contentPath(sim, vendor)}/content/library/item/updatesession/file${query}`, {
    headers: sessionId === undefined ? {} : { 'vmware-api-session-id': sessionId },
  });
}

export function control(sim: Simulator, path: string, body?: unknown) {
  return http(`${sim.url}/__simulator/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}
