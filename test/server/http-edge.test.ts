import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preferredEncoding } from '../../src/gateway/plugins/compat/compression.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({ env: { CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' } });
});
afterAll(() => gateway.close());

const PAGE = '{ auditEvents(first: 50) { edges { cursor node { __typename ... on AuditRecord { uuid objectType } } } } }';
const post = (query: string, headers: Record<string, string> = {}) =>
  gateway.fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });

describe('response compression', () => {
  it.each([
    ['br', brotliDecompressSync],
    ['gzip', gunzipSync],
  ] as const)('compresses a large answer with %s when the client accepts it', async (encoding, decompress) => {
    const plain = await post(PAGE);
    const expected = await plain.text();
    expect(expected.length).toBeGreaterThan(1024);
    expect(plain.headers.get('content-encoding')).toBeNull();

    const response = await post(PAGE, { 'accept-encoding': encoding === 'br' ? 'gzip;q=0.5, br' : 'gzip, deflate' });
    expect(response.headers.get('content-encoding')).toBe(encoding);
    expect(response.headers.get('vary')).toMatch(/accept-encoding/i);
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.length).toBeLessThan(expected.length / 2);
    const decoded = JSON.parse(decompress(body).toString()) as any;
    expect(decoded.data.auditEvents.edges).toHaveLength(50);
  });

  it('leaves small answers alone', async () => {
    const response = await post('{ __typename }', { 'accept-encoding': 'br, gzip' });
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('reads Accept-Encoding with q-values', () => {
    expect(preferredEncoding('gzip, deflate, br')).toBe('br');
    expect(preferredEncoding('br;q=0.1, gzip;q=0.9')).toBe('gzip');
    expect(preferredEncoding('br;q=0, gzip')).toBe('gzip');
    expect(preferredEncoding('identity')).toBeUndefined();
    expect(preferredEncoding('*')).toBe('br');
    expect(preferredEncoding(null)).toBeUndefined();
  });
});

describe('CORS with several origins', () => {
  const preflight = (origin: string, requestHeaders = 'content-type,x-api-key') =>
    gateway.fetch('/graphql', {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
    });

  it('answers a listed origin with that origin and every header the gateway accepts', async () => {
    const response = await preflight('https://admin.example.com');
    expect(response.headers.get('access-control-allow-origin')).toBe('https://admin.example.com');
    const allowed = (response.headers.get('access-control-allow-headers') ?? '').split(/,\s*/);
    for (const header of [
      'content-type',
      'x-api-key',
      'authorization',
      'apollo-require-preflight',
      'x-graphql-yoga-csrf',
      'x-request-id',
      'traceparent',
      'apollographql-client-name',
      'apollographql-client-version',
    ]) {
      expect(allowed).toContain(header);
    }
  });

  it.each(['null', 'https://evil.example.net', 'https://app.example.com.evil.net'])(
    'gives origin %s no access-control-allow-origin at all',
    async (origin) => {
      const refused = await preflight(origin);
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      expect(refused.headers.get('access-control-allow-credentials')).toBeNull();
      const simple = await post('{ __typename }', { origin });
      expect(simple.headers.get('access-control-allow-origin')).toBeNull();
    },
  );
});

describe('CORS in demo mode, without CORS_ORIGINS', () => {
  let demo: TestGateway;
  beforeAll(async () => {
    demo = await startTestGateway({ config: { corsLoopbackOrigins: true } });
  });
  afterAll(() => demo.close());
  const preflight = (origin: string) =>
    demo.fetch('/graphql', {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });

  it.each(['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8080', 'http://localhost'])(
    'lets a page served from %s call the gateway',
    async (origin) => {
      const response = await preflight(origin);
      expect(response.status).toBeLessThan(300);
      expect(response.headers.get('access-control-allow-origin')).toBe(origin);
    },
  );

  it.each(['http://localhost.evil.net', 'https://localhost:5173', 'http://192.168.1.5:5173', 'null'])(
    'gives %s no access-control-allow-origin',
    async (origin) => {
      expect((await preflight(origin)).headers.get('access-control-allow-origin')).toBeNull();
    },
  );
});

describe('edges of HTTP', () => {
  it('answers / with a pointer to /graphql', async () => {
    const text = await gateway.fetch('/');
    expect(text.status).toBe(200);
    expect(await text.text()).toContain('/graphql');
    const html = await gateway.fetch('/', { headers: { accept: 'text/html' } });
    expect(await html.text()).toContain('href="/graphql"');
  });

  it('does not echo an invalid JSON body back', async () => {
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query": "{ __typename }", "variables": {"password": "hunter2-secret"',
    });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('__typename');
    expect(JSON.parse(text).errors[0].extensions).toEqual({ code: 'BAD_REQUEST' });
  });
});

describe('health checks', () => {
  it.each(['/healthz', '/healthz?cache-buster=1', '/healthz?', '/readyz', '/readyz?cache-buster=1'])('answers %s with 200', async (path) => {
    expect((await gateway.fetch(path)).status).toBe(200);
  });

  it.each(['/healthz/', '/readyz/', '/graphql/healthz', '/x/readyz'])('answers %s, another path, with 404', async (path) => {
    expect((await gateway.fetch(path)).status).toBe(404);
  });

  it('runs an operation whose query string ends with a probe path', async () => {
    const response = await gateway.fetch(`/graphql?query=${encodeURIComponent('{ __typename }')}&x=/healthz`, {
      headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' },
    });
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('a request that accepts no media type the gateway answers with', () => {
  const ALL = 'application/graphql-response+json, application/json, multipart/mixed, text/event-stream';
  const get = (query: string, accept: string) =>
    gateway.fetch(`/graphql?query=${encodeURIComponent(query)}`, { headers: { accept, 'x-graphql-yoga-csrf': '1' } });

  async function expectNotAcceptable(response: Response, mediaTypes: string) {
    expect(response.status).toBe(406);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({
      errors: [
        {
          message: `The Accept header allows none of the media types this request can be answered with: ${mediaTypes}.`,
          extensions: { code: 'BAD_REQUEST' },
        },
      ],
    });
  }

  it('gets a 406 with a JSON BAD_REQUEST error naming the media types it could ask for', async () => {
    await expectNotAcceptable(await post('{ __typename }', { accept: 'image/png' }), ALL);
  });

  it('gets one for an operation asked for as HTML, GraphiQL aside', async () => {
    await expectNotAcceptable(await get('{ __typename }', 'text/html'), ALL);
  });

  it('gets one for a subscription asked for as JSON, naming the event stream', async () => {
    await expectNotAcceptable(await get('subscription { auditEventAdded { __typename } }', 'application/json'), 'text/event-stream');
  });

  it('gets one for an incremental answer asked for as JSON, naming the types that carry parts', async () => {
    const deferred = '{ auditEvents(first: 2) { edges { cursor ... @defer { node { __typename } } } } }';
    await expectNotAcceptable(await post(deferred, { accept: 'application/json' }), 'multipart/mixed, text/event-stream');
  });

  it('gets one for media types in another charset', async () => {
    const response = await post('{ __typename }', { accept: 'application/json; charset=iso-8859-1' });
    expect(response.status).toBe(406);
    expect(((await response.json()) as any).errors[0]).toEqual({
      message: 'The Accept header allows no media type in UTF-8, the only charset the gateway answers in.',
      extensions: { code: 'BAD_REQUEST' },
    });
  });

  it('is logged as a caller mistake: its code on the access line', async () => {
    const before = gateway.logs().length;
    await post('{ __typename }', { accept: 'image/png' });
    const lines = gateway.logs().slice(before);
    expect(lines.filter((l) => (l.level as number) > 30)).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'request', status: 406, errors: ['BAD_REQUEST'] }));
  });

  it.each(['*/*', 'text/html, application/json', 'application/*'])('is not refused when it accepts %s', async (accept) => {
    expect(await (await post('{ __typename }', { accept })).json()).toEqual({ data: { __typename: 'Query' } });
  });
});
