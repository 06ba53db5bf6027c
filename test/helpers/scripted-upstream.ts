/**
 * Both upstreams as a small node:http server whose answers a test scripts: each route answers
 * what was queued for it, first queued first, and a good answer once the queue is empty (a fresh
 * token or session id each time, an empty audit page, no files). Every request is kept, headers
 * and body included, so a test can see which credential a call carried.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ScriptedRoute = 'token' | 'audit' | 'session' | 'files';

export interface ScriptedAnswer {
  readonly status?: number;
  /** Sent as JSON; a string is sent as it is; a function answers from the request (an echo). */
  readonly body: unknown;
  /** Sends the first `afterBytes` of the body at once, the rest once `until` settles: a body still arriving. */
  readonly pause?: { readonly afterBytes: number; readonly until: Promise<unknown> };
}

export interface ScriptedRequest {
  readonly route: ScriptedRoute | 'unknown';
  /** Path and query string, as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface ScriptedUpstream {
  /** The base URL of both services (the content library's vendor is `vmware`). */
  readonly url: string;
  /** The next answers of `route`, in this order. */
  answerNext(route: ScriptedRoute, ...answers: ScriptedAnswer[]): void;
  requests(route?: ScriptedRoute): ScriptedRequest[];
  /** Forgets the requests seen and the answers still queued. */
  clear(): void;
  close(): Promise<void>;
}

const ROUTES: Record<string, ScriptedRoute> = {
  'POST /SAAS/auth/oauthtoken': 'token',
  'GET /analytics/reports/audit/': 'audit',
  'POST /rest/com/vmware/cis/session': 'session',
  'GET /rest/com/vmware/content/library/item/updatesession/file': 'files',
};

const AUDIT_HEADER = ['reports.dateAndTime', 'reports.userDomain', 'reports.Event', 'reports.object', ''];

export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  const queues = new Map<ScriptedRoute, ScriptedAnswer[]>();
  const seen: ScriptedRequest[] = [];
  let issued = 0;
  const goodAnswer = (route: ScriptedRoute): ScriptedAnswer => {
    issued++;
    switch (route) {
      case 'token':
        return { body: { access_token: `good-access-token-${issued}`, expires_in: 3600, refresh_token: `good-refresh-token-${issued}` } };
      case 'session':
        return { body: { value: `good-session-id-${issued}` } };
      case 'audit':
        return { body: { header: AUDIT_HEADER, data: [] } };
      case 'files':
        return { body: { value: [] } };
    }
  };

  // Room for a 16 KB token in a header, as a real upstream allows.
  const server = createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const route = ROUTES[`${req.method} ${path}`];
      seen.push({ route: route ?? 'unknown', url: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString() });
      if (!route) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
        return;
      }
      const answer = queues.get(route)?.shift() ?? goodAnswer(route);
      const value = typeof answer.body === 'function' ? (answer.body as (r: ScriptedRequest) => unknown)(seen.at(-1)!) : answer.body;
      const body = Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', 'content-length': body.length });
      if (!answer.pause) {
        res.end(body);
        return;
      }
      res.write(body.subarray(0, answer.pause.afterBytes));
      void answer.pause.until.finally(() => res.end(body.subarray(answer.pause!.afterBytes)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answerNext(route, ...answers) {
      queues.set(route, [...(queues.get(route) ?? []), ...answers]);
    },
    requests: (route) => seen.filter((request) => route === undefined || request.route === route),
    clear() {
      queues.clear();
      seen.length = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** An audit row as the identity service sends it, its record at `position` (newest first) carrying `values`. */
export function scriptedAuditRow(position: number, values: Record<string, unknown> = {}): unknown[] {
  const timestamp = 1_700_000_000_000 - 1000 * position;
  const uuid = `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`;
  const record = { baseType: 'Action', uuid, timestamp, organizationId: 1, tenantId: 't', objectType: 'LOGIN', values };
  return [String(timestamp), 'admin (System Domain)', 'LOGIN (Password)', null, JSON.stringify(record)];
}

/** An audit report holding `rows`. */
export function scriptedAuditPage(rows: readonly unknown[]): { header: string[]; data: readonly unknown[] } {
  return { header: AUDIT_HEADER, data: rows };
}

/** The environment that points both services of a test harness at `upstream`. */
export function scriptedEnv(upstream: ScriptedUpstream): Record<string, string> {
  return { IDENTITY_BASE_URL: upstream.url, CONTENT_LIBRARY_URL: upstream.url };
}
