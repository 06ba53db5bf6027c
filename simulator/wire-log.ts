/**
 * What the simulator received, request by request, so tests can assert what a client really sent:
 * method, path, query, form body, headers and the status answered.
 *
 * Secrets are never kept in clear: credentials (Authorization, session ids, cookies, API keys) and
 * secret form or query fields (client_secret, refresh_token, password, ...) are replaced by a
 * fingerprint, a keyed hash that is only comparable within one simulator: `fingerprint(value)`
 * gives the one a known value would have. The log is bounded: the oldest entries are dropped.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { CONTROL_PREFIX } from './control-http.js';
import { jsonAnswer, type Answer, type RequestContext } from './http-util.js';
import type { SimulatorRoute, SimulatorWire, WireRequest } from './types.js';

/** What record() needs of the response: its status, once written. */
export interface AnsweredResponse {
  readonly statusCode: number;
  once(event: 'finish', listener: () => void): unknown;
}

/** Most entries kept; a long demo run must not grow the log without end. */
export const WIRE_LOG_LIMIT = 2000;
/** Bodies larger than this are not parsed as a form (token and login bodies are tiny). */
const MAX_FORM_BYTES = 16 * 1024;

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'vmware-api-session-id', 'x-api-key']);
const SECRET_FIELDS = new Set(['client_secret', 'refresh_token', 'access_token', 'password', 'code', 'assertion', 'token']);

export class WireLog implements SimulatorWire {
  readonly #key = randomBytes(32);
  readonly #limit: number;
  #entries: { -readonly [K in keyof WireRequest]: WireRequest[K] }[] = [];

  constructor(limit = WIRE_LOG_LIMIT) {
    this.#limit = limit;
  }

  /** `#` and 16 hex digits of an HMAC keyed per simulator. */
  fingerprint(secret: string): string {
    return `#${createHmac('sha256', this.#key).update(secret).digest('hex').slice(0, 16)}`;
  }

  /** Copies: the log stays as it is. */
  requests(route?: SimulatorRoute): WireRequest[] {
    return this.#entries.filter((e) => route === undefined || e.route === route).map((e) => ({ ...e }));
  }

  clear(): void {
    this.#entries = [];
  }

  /** Records a request; its status is filled in when the answer is written. */
  record(ctx: RequestContext, route: SimulatorRoute | undefined, res: AnsweredResponse): void {
    const bodyBytes = Buffer.byteLength(ctx.body);
    const entry = {
      route,
      method: ctx.method,
      path: ctx.url.pathname,
      query: this.#fields(ctx.url.searchParams),
      form: isForm(ctx) && bodyBytes <= MAX_FORM_BYTES ? this.#fields(new URLSearchParams(ctx.body)) : undefined,
      bodyBytes,
      headers: this.#headers(ctx),
      status: undefined as number | undefined,
    };
    this.#entries.push(entry);
    if (this.#entries.length > this.#limit) this.#entries.splice(0, this.#entries.length - this.#limit);
    res.once('finish', () => {
      entry.status = res.statusCode;
    });
  }

  #fields(params: URLSearchParams): Record<string, string> {
    const fields: Record<string, string> = {};
    for (const [name, value] of params) {
      if (Object.hasOwn(fields, name)) continue;
      fields[name] = SECRET_FIELDS.has(name) ? this.fingerprint(value) : value;
    }
    return fields;
  }

  #headers(ctx: RequestContext): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, raw] of Object.entries(ctx.headers)) {
      if (raw === undefined) continue;
      const value = Array.isArray(raw) ? raw.join(', ') : raw;
      headers[name] = SECRET_HEADERS.has(name) ? this.#credential(value) : value;
    }
    return headers;
  }

  /** `Basic abc=` -> `Basic #…`: the scheme stays readable, the credential does not. */
  #credential(value: string): string {
    const match = /^([A-Za-z][A-Za-z0-9-]*)\s+(\S.*)$/.exec(value);
    return match ? `${match[1]} ${this.fingerprint(match[2]!)}` : this.fingerprint(value);
  }
}

function isForm(ctx: RequestContext): boolean {
  const type = ctx.headers['content-type'];
  return typeof type === 'string' && type.toLowerCase().startsWith('application/x-www-form-urlencoded');
}

/**
 * The wire log's control operations, for a simulator in another process:
 *   GET  /__simulator/wire[?route=token]  -> {requests: WireRequest[]}
 *   POST /__simulator/wire/clear
 * undefined for any other control path.
 */
export function handleWireControl(ctx: RequestContext, wire: WireLog): Answer | undefined {
  const action = ctx.url.pathname.slice(CONTROL_PREFIX.length).replace(/\/$/, '');
  if (ctx.method === 'GET' && action === 'wire') {
    const route = ctx.url.searchParams.get('route') || undefined;
    const requests = wire.requests().filter((r) => route === undefined || r.route === route);
    return jsonAnswer(200, { requests });
  }
  if (ctx.method === 'POST' && action === 'wire/clear') {
    wire.clear();
    return jsonAnswer(200, { ok: true });
  }
  return undefined;
}
