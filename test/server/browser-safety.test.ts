import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testFile } from '../helpers/temp-file.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});
const start = async (env: Record<string, string> = {}) => (gateway = await startTestGateway({ env }));
const INTROSPECTION = '{ __schema { queryType { name } } }';

describe('CSRF prevention', () => {
  it('refuses a simple cross-site GET, serves one with a custom header', async () => {
    const g = await start();
    const url = `/graphql?query=${encodeURIComponent('{ __typename }')}`;
    const simple = await g.fetch(url, { headers: { accept: 'application/json' } });
    expect(simple.status).toBe(403);
    const preflighted = await g.fetch(url, { headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' } });
    expect(preflighted.status).toBe(200);
    expect(((await preflighted.json()) as any).data.__typename).toBe('Query');
  });
});

describe('CORS', () => {
  const preflight = (g: TestGateway, origin: string) =>
    g.fetch('/graphql', {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' },
    });

  it('allows only the configured origins', async () => {
    const g = await start({ CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' });
    const allowed = await preflight(g, 'https://app.example.com');
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/x-api-key/);
    const refused = await preflight(g, 'https://evil.example.net');
    expect(refused.headers.get('access-control-allow-origin')).not.toBe('https://evil.example.net');
  });

  it('grants no cross-origin access when CORS_ORIGINS is unset', async () => {
    const g = await start();
    const response = await preflight(g, 'https://app.example.com');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('introspection', () => {
  it('is off by default in upstream mode, with GRAPHQL_VALIDATION_FAILED', async () => {
    const g = await start();
    const result = await g.execute(INTROSPECTION);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('is on when GRAPHQL_INTROSPECTION=true', async () => {
    const g = await start({ GRAPHQL_INTROSPECTION: 'true' });
    const result = await g.execute(INTROSPECTION);
    expect(result.data.__schema.queryType.name).toBe('Query');
  });

  it('is on for a caller with an API key and off for an anonymous one when GRAPHQL_INTROSPECTION=authenticated', async () => {
    const g = await start({ GRAPHQL_INTROSPECTION: 'authenticated', GATEWAY_API_KEYS: 'key-one', GATEWAY_ALLOW_ANONYMOUS: 'true' });
    const withKey = await g.execute(INTROSPECTION, undefined, { 'x-api-key': 'key-one' });
    expect(withKey.data.__schema.queryType.name).toBe('Query');
    const anonymous = await g.execute(INTROSPECTION);
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('still serves the federation SDL to routers when it is off', async () => {
    const g = await start();
    const result = await g.execute('{ _service { sdl } }');
    expect(result.data._service.sdl).toContain('@key(fields: "id")');
  });
});

describe('persisted operations', () => {
  const document = 'query Known { auditEvents(first: 2) { edges { cursor } } }';
  const hash = createHash('sha256').update(document).digest('hex');
  const manifest = () => testFile('operations.json', JSON.stringify({ [hash]: document }));
  const byHash = (g: TestGateway, sha256Hash: string) =>
    g.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash } } }),
    });

  it('runs a known operation by its hash and, with PERSISTED_OPERATIONS_ONLY, refuses any other', async () => {
    const g = await start({ PERSISTED_OPERATIONS_FILE: manifest(), PERSISTED_OPERATIONS_ONLY: 'true' });
    const known = (await (await byHash(g, hash)).json()) as any;
    expect(known.data.auditEvents.edges).toHaveLength(2);
    const unknown = (await (await byHash(g, 'f'.repeat(64))).json()) as any;
    expect(unknown.errors[0]).toMatchObject({ message: 'Unknown persisted operation.', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } });
    g.sim.control.resetCounters();
    const arbitrary = await g.execute('{ auditEvents(first: 1) { edges { cursor } } }');
    expect(arbitrary.data ?? null).toBeNull();
    expect(arbitrary.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
    expect(g.sim.control.counters().audit).toBe(0);
  });

  it('still runs arbitrary operations when only the file is given', async () => {
    const g = await start({ PERSISTED_OPERATIONS_FILE: manifest() });
    expect((await g.execute('{ auditEvents(first: 1) { edges { cursor } } }')).data.auditEvents.edges).toHaveLength(1);
    expect(((await (await byHash(g, hash)).json()) as any).data.auditEvents.edges).toHaveLength(2);
  });
});
