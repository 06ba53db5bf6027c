import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_USER, MISSING_SESSION_ID, SESSION_IDS } from '../../simulator/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const AUDIT = '{ auditEvents(first: 5) { edges { node { ... on AuditRecord { uuid } } } } }';
const FILES = `{ updateSessionFiles(updateSessionId: "${SESSION_IDS.mixed}") { name size } }`;
const BOTH = `{ auditEvents(first: 2) { edges { cursor } } updateSessionFiles(updateSessionId: "${SESSION_IDS.ready}") { name } }`;

describe('error masking across a fault-injection run', () => {
  let gateway: TestGateway;
  const bodies: string[] = [];
  beforeAll(async () => {
    // Short: several cases wait the deadline out.
    gateway = await startTestGateway({ env: { UPSTREAM_TIMEOUT_MS: '600' } });
  });
  afterAll(() => gateway.close());

  const run = async (query: string) => {
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': `fault-${bodies.length}` },
      body: JSON.stringify({ query }),
    });
    const text = await response.text();
    bodies.push(text);
    return JSON.parse(text) as { data?: any; errors?: { message: string; path?: unknown[]; extensions: { code: string } }[] };
  };

  const faults: [string, () => void, string, string][] = [
    ['persistent 503 on the audit report', () => gateway.sim.control.failNext(50, 503, { route: 'audit' }), AUDIT, 'UPSTREAM_UNAVAILABLE'],
    ['502 with an HTML body', () => gateway.sim.control.failNext(50, 502, { route: 'files' }), FILES, 'UPSTREAM_UNAVAILABLE'],
    ['a malformed audit body', () => gateway.sim.control.malformNext('audit', 3), AUDIT, 'UPSTREAM_INVALID_RESPONSE'],
    ['a truncated files body', () => gateway.sim.control.malformNext('files', 3, { kind: 'truncated' }), FILES, 'UPSTREAM_INVALID_RESPONSE'],
    [
      'a refused token request',
      () => {
        gateway.sim.control.expireTokens({ refreshTokensToo: true });
        gateway.sim.control.failNext(5, 401, { route: 'token' });
      },
      AUDIT,
      'UPSTREAM_UNAUTHORIZED',
    ],
    [
      'a refused session login',
      () => {
        gateway.sim.control.expireSessions();
        gateway.sim.control.failNext(5, 401, { route: 'session' });
      },
      FILES,
      'UPSTREAM_UNAUTHORIZED',
    ],
    ['a hung upstream', () => gateway.sim.control.setLatency(60_000, 'audit'), AUDIT, 'UPSTREAM_UNAVAILABLE'],
    ['an unknown session', () => {}, `{ updateSessionFiles(updateSessionId: "${MISSING_SESSION_ID}") { name } }`, 'NOT_FOUND'],
  ];

  it.each(faults)('%s: the error has its code and a plain message', async (_name, inject, query, code) => {
    gateway.sim.control.clearFaults();
    inject();
    const result = await run(query);
    gateway.sim.control.clearFaults();
    expect(result.errors?.map((e) => e.extensions.code)).toContain(code);
    for (const error of result.errors ?? []) expect(Object.keys(error.extensions)).toEqual(['code']);
  });

  it.each([
    ['a DateTime that does not parse', { from: 'yesterday' }],
    ['an enum value in the upstream spelling', { action: 'Update' }],
  ])('answers a variable that does not coerce (%s) with BAD_USER_INPUT', async (_case, filter) => {
    const result = await gateway.execute(
      'query($filter: AuditEventFilter) { auditEvents(first: 1, filter: $filter) { edges { cursor } } }',
      { filter },
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).toMatch(/^Variable "\$/);
  });

  it('keeps the healthy field when the other upstream fails', async () => {
    gateway.sim.control.failNext(50, 503, { route: 'files' });
    const result = await run(BOTH);
    gateway.sim.control.clearFaults();
    expect(result.data.auditEvents.edges).toHaveLength(2);
    expect(result.data.updateSessionFiles).toBeNull();
    expect(result.errors).toEqual([
      expect.objectContaining({ path: ['updateSessionFiles'], extensions: { code: 'UPSTREAM_UNAVAILABLE' } }),
    ]);
  });

  it('never shows a client an upstream URL, address, secret, token, body or stack trace', () => {
    const origin = new URL(gateway.sim.url);
    const forbidden = [
      gateway.sim.url,
      origin.host,
      '127.0.0.1',
      '/analytics/reports',
      '/rest/com/',
      '/SAAS/auth',
      DEMO_CLIENT.secret,
      DEMO_USER.password,
      'Bearer',
      'access_token',
      'invalid_client',
      '<html',
      'vapi.std.errors',
      'ZodError',
      '    at ',
      'stack',
    ];
    const everything = bodies.join('\n');
    expect(bodies.length).toBeGreaterThanOrEqual(9);
    for (const text of forbidden) expect(everything).not.toContain(text);
  });

  it('logs the detail of each failure with the request id', () => {
    const lines = gateway.logs();
    const failure = lines.find((l) => l.requestId === 'fault-0' && l.code === 'UPSTREAM_UNAVAILABLE');
    expect(failure).toBeDefined();
    const malformed = lines.find((l) => l.requestId === 'fault-2' && l.code === 'UPSTREAM_INVALID_RESPONSE');
    expect(JSON.stringify(malformed)).toMatch(/issues|expected/i);
  });
});
