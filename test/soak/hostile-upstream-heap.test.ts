/**
 * A hostile identity service against the gateway in its own process, heap capped at the production
 * 256 MB: every audit call is answered with a 16 MB body whatever pageSize it asked, either 5000
 * well-formed rows with padding or 3.9 million plain numbers (which the bound on JSON arrays and
 * objects does not count). A handful of concurrent queries used to end the process with "JavaScript
 * heap out of memory": 32 pooled connections each received such a body, and each page's rows were
 * read. Now a page longer than asked is refused before its rows are read, and the answer bytes being
 * received at once are bounded, so every request is answered with contract errors and the process
 * keeps serving.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runGatewayOverIdentity, type GatewayProcess } from '../helpers/process.js';
import { scriptedAuditPage, scriptedAuditRow } from '../helpers/scripted-upstream.js';

const page = (rows: readonly unknown[]) => JSON.stringify({ ...scriptedAuditPage(rows), _links: { self: { href: '/x' } } });

/** 5000 well-formed rows of about 3 KB each: 15 MB, within the 16 MB body cap. */
const paddedPage = () => Buffer.from(page(Array.from({ length: 5000 }, (_, i) => scriptedAuditRow(i, { success: 'true', pad: 'x'.repeat(2800) }))));
/** 3.9 million numbers where rows belong: 15.6 MB, two JSON containers. */
const numbersPage = () => Buffer.from(`{"header":[],"data":[${new Array(3_900_000).fill('1.5').join(',')}]}`);

/**
 * Token and audit routes; the audit body by the filter's first letter: P padded rows, N numbers,
 * else two good rows. `open()` counts the audit answers not yet sent whole or cut off.
 */
function hostileIdentity(bodies: { padded: Buffer; numbers: Buffer }): Server & { open(): number } {
  let open = 0;
  const server = createServer((request, response) => {
    request.resume();
    const url = new URL(request.url ?? '/', 'http://identity');
    response.setHeader('content-type', 'application/json');
    if (url.pathname === '/SAAS/auth/oauthtoken') {
      response.end(JSON.stringify({ access_token: 'token', token_type: 'Bearer', expires_in: 3600 }));
    } else if (url.pathname === '/analytics/reports/audit/') {
      const kind = url.searchParams.get('objectType')?.[0];
      open++;
      response.once('close', () => open--);
      response.end(kind === 'P' ? bodies.padded : kind === 'N' ? bodies.numbers : page([scriptedAuditRow(0), scriptedAuditRow(1)]));
    } else {
      response.statusCode = 404;
      response.end('{}');
    }
  });
  return Object.assign(server, { open: () => open });
}

const ALIASES = 8;
/** Eight aliases over distinct filters: eight upstream calls, none shared. */
const aliasedQuery = (prefix: string) =>
  `{ ${Array.from(
    { length: ALIASES },
    (_, i) => `a${i}: auditEvents(first: 3, filter: { objectType: "${prefix}T${i}" }) { edges { node { ... on AuditRecord { uuid } } } }`,
  ).join(' ')} }`;

interface Answer {
  readonly status: number;
  readonly body: { data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string } }[] };
}

describe('a hostile identity service sending 16 MB audit bodies, gateway heap capped at 256 MB', () => {
  let identity: ReturnType<typeof hostileIdentity>;
  let gateway: GatewayProcess;
  let url: string;
  beforeAll(async () => {
    identity = hostileIdentity({ padded: paddedPage(), numbers: numbersPage() });
    await new Promise<void>((resolve) => identity.listen(0, '127.0.0.1', resolve));
    gateway = runGatewayOverIdentity(identity, 256, { UPSTREAM_TIMEOUT_MS: '20000' });
    url = await gateway.ready;
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    identity?.closeAllConnections();
    await new Promise((resolve) => identity?.close(resolve));
  });

  const ask = async (query: string): Promise<Answer> => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };

  it('answers every concurrent query with contract errors and keeps serving', { timeout: 60_000 }, async () => {
    const queries = [...['P0', 'P1'], ...['N0', 'N1', 'N2', 'N3']].map(aliasedQuery);
    const answers = await Promise.all(queries.map((query) => ask(query).catch((error: Error) => error)));
    // Every call of a request is read or refused before it is answered.
    await vi.waitFor(() => expect(identity.open()).toBe(0), { timeout: 40_000, interval: 100 });

    expect(gateway.stderr()).not.toMatch(/heap out of memory/);
    expect(gateway.child.exitCode).toBeNull();
    for (const answer of answers) {
      expect(answer).not.toBeInstanceOf(Error);
      const { status, body } = answer as Answer;
      expect(status).toBe(200);
      // Each alias fails on its own: null, with its own error.
      expect(body.data).toEqual(Object.fromEntries(Array.from({ length: ALIASES }, (_, i) => [`a${i}`, null])));
      const codes = (body.errors ?? []).map((error) => error.extensions?.code);
      expect(codes.length).toBeGreaterThan(0);
      for (const code of codes) expect(['UPSTREAM_INVALID_RESPONSE', 'UPSTREAM_UNAVAILABLE']).toContain(code);
    }

    const healthy = await ask('{ good: auditEvents(first: 3, filter: { objectType: "good" }) { edges { node { ... on AuditRecord { uuid } } } } }');
    expect(healthy.body.errors).toBeUndefined();
    expect(healthy.body.data).toEqual({
      good: { edges: [0, 1].map((i) => ({ node: { uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` } })) },
    });
    expect(gateway.child.exitCode).toBeNull();
  });
});
