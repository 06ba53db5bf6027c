import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSessionIds } from '../../src/demo.js';
import { exampleOperations } from '../../src/gateway/examples/index.js';
import { SESSION_IDS } from '../../simulator/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const html = { accept: 'text/html' };
const assetUrls = (page: string) => [...page.matchAll(/(?:src|href)="(\/graphiql\/[^"]+)"/g)].map((m) => m[1]!);
const workerUrls = (page: string) => [...page.matchAll(/"(\/graphiql\/[^"]+\.worker\.[^"]+)"/g)].map((m) => m[1]!);

describe('GraphiQL in upstream mode with API keys', () => {
  let gateway: TestGateway;
  let page: string;
  beforeAll(async () => {
    gateway = await startTestGateway({ env: { GATEWAY_API_KEYS: 'key-alpha', GATEWAY_ALLOW_ANONYMOUS: 'false' } });
    page = await (await gateway.fetch('/graphql', { headers: html })).text();
  });
  afterAll(() => gateway.close());

  it('is a small page loading its assets from the gateway itself, no CDN', async () => {
    expect(page.length).toBeLessThan(32 * 1024);
    expect(page).not.toMatch(/(src|href)="https?:/);
    const assets = [...assetUrls(page), ...workerUrls(page)];
    expect(assets.length).toBeGreaterThanOrEqual(6);
    for (const url of assets) expect(url).toMatch(/\.[\w-]{16}\.(js|css|ico)$/);
  });

  it('serves every asset immutable, with an ETag, compressed once, and 304 on revalidation', async () => {
    for (const url of [...assetUrls(page), ...workerUrls(page)]) {
      const response = await gateway.fetch(url, { headers: { 'accept-encoding': 'gzip, br' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('content-encoding')).toBe('br');
      const etag = response.headers.get('etag')!;
      expect(etag).toMatch(/^"[\w-]{16}"$/);
      expect(url).toContain(etag.slice(1, -1));
      const body = brotliDecompressSync(Buffer.from(await response.arrayBuffer()));
      expect(body.length).toBeGreaterThan(100);
      const again = await gateway.fetch(url, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
    }
    const js = assetUrls(page).find((u) => u.endsWith('.js'))!;
    const plain = await gateway.fetch(js);
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toContain('renderYogaGraphiQL');
    expect((await gateway.fetch('/graphiql/graphiql.0000000000000000.js')).status).toBe(404);
  });

  it('revalidates the page itself by ETag', async () => {
    const first = await gateway.fetch('/graphql', { headers: html });
    const etag = first.headers.get('etag')!;
    expect(first.headers.get('cache-control')).toBe('no-cache');
    const again = await gateway.fetch('/graphql', { headers: { ...html, 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('opens on example tabs for a real service: no simulator session ids, a key header to fill in', () => {
    expect(page).toContain('RecentLogins');
    expect(page).toContain('UpdateSessionFiles');
    for (const id of Object.values(SESSION_IDS)) expect(page).not.toContain(id);
    expect(page).toContain('an update session id of your content library');
    expect(page).toContain('x-api-key');
  });

  it('lets a key holder introspect (docs, autocomplete) and refuses anonymous introspection', async () => {
    const query = '{ __schema { queryType { name } } }';
    const holder = await gateway.execute(query, undefined, { 'x-api-key': 'key-alpha' });
    expect(holder.data?.__schema.queryType.name).toBe('Query');
    const anonymous = await startTestGateway();
    try {
      const refused = await anonymous.execute(query);
      expect(refused.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    } finally {
      await anonymous.close();
    }
  });
});

describe('GraphiQL examples', () => {
  it('run on the simulator sessions in demo mode, and ask for an id otherwise', () => {
    const demo = exampleOperations(demoSessionIds).find((op) => op.name === 'Update session files')!;
    expect(demo.variables).toEqual({ id: SESSION_IDS.mixed });
    const upstream = exampleOperations().find((op) => op.name === 'Update session files')!;
    expect(upstream.variables?.id).toMatch(/update session id/);
  });
});

describe('GraphiQL with introspection switched off', () => {
  it('does not ask for the schema, so no refusal floods the page', async () => {
    const gateway = await startTestGateway({ env: { GRAPHQL_INTROSPECTION: 'false' } });
    try {
      const page = await (await gateway.fetch('/graphql', { headers: html })).text();
      expect(page).toContain('"schema":null');
    } finally {
      await gateway.close();
    }
  });
});
