/**
 * The libraries alone, doing what the gateway's workarounds (src/gateway/plugins/compat/) make up
 * for. Each test fails the day its library does it right: then the workaround can go.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga, useReadinessCheck } from 'graphql-yoga';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { useContentEncoding } from '@whatwg-node/server';
import { describe, expect, it } from 'vitest';

const schema = createSchema({
  typeDefs: 'type Query { text(bytes: Int!): String }',
  resolvers: { Query: { text: (_: unknown, { bytes }: { bytes: number }) => 'x'.repeat(bytes) } },
});
const bare = (options: Parameters<typeof createYoga>[0] = { schema }) => createYoga({ schema, logging: false, ...options });
const JSON_TYPE = { 'content-type': 'application/json' };
const post = (body: string, headers: Record<string, string> = {}) =>
  new Request('http://yoga.test/graphql', { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body });
const get = (yoga: ReturnType<typeof bare>, path: string) =>
  yoga.fetch(`http://yoga.test${path}`, { headers: { accept: 'application/json' } });

describe('graphql-yoga 5.24 and @whatwg-node/server 0.11', () => {
  it('useContentEncoding leaves a large answer uncompressed when the client states q-values (compression.ts)', async () => {
    const yoga = bare({ schema, plugins: [useContentEncoding()] });
    const query = JSON.stringify({ query: '{ text(bytes: 4096) }' });
    const response = await yoga.fetch(post(query, { 'accept-encoding': 'br;q=1.0, gzip;q=0.8' }));
    expect(response.headers.get('content-encoding')).toBeNull();
  });

  it('@graphql-yoga/render-graphiql inlines its whole bundle in every page, without an ETag (graphiql.ts)', async () => {
    const yoga = bare({ schema, renderGraphiQL });
    const response = await yoga.fetch('http://yoga.test/graphql', { headers: { accept: 'text/html' } });
    expect(response.headers.get('etag')).toBeNull();
    expect((await response.text()).length).toBeGreaterThan(1024 * 1024);
  });

  it('the health and readiness checks match the end of the URL, not its path (probes.ts)', async () => {
    const readiness = useReadinessCheck({ endpoint: '/readyz', check: () => true });
    const yoga = bare({ schema, healthCheckEndpoint: '/healthz', plugins: [readiness] });
    expect((await get(yoga, '/healthz?cache-buster=1')).status).toBe(404);
    expect(await (await get(yoga, '/graphql?query=%7B__typename%7D&x=/readyz')).text()).toBe('');
  });

  it('a query-string variables parameter that is not JSON is an unexpected error (request-params.ts)', async () => {
    expect((await get(bare(), '/graphql?query=%7B__typename%7D&variables=%7B')).status).toBe(500);
  });

  it('a 406 and a 415 come with an empty body (coded-refusals.ts)', async () => {
    const notAcceptable = await bare().fetch(post('{"query":"{ __typename }"}', { accept: 'image/png' }));
    expect([notAcceptable.status, await notAcceptable.text()]).toEqual([406, '']);
    const unsupported = await bare().fetch(post('{ __typename }', { 'content-type': 'text/plain' }));
    expect([unsupported.status, await unsupported.text()]).toEqual([415, '']);
  });

  it('a body that is not JSON is echoed back in extensions.originalError (coded-refusals.ts)', async () => {
    const response = await bare().fetch(post('{"query": "{ __typename }", "variables": {"password": "hunter2"'));
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('originalError');
  });

  it('maxRequestBodySize pipes even a body Node framed by its length into a copy (request-body-limit.ts)', async () => {
    const seen: { given?: Request; parsed?: Request } = {};
    const recordParsed = {
      onRequestParse(payload: { request: Request; setRequestParser: (parse: (r: Request) => unknown) => void }) {
        const { request, setRequestParser } = payload;
        seen.given = request;
        setRequestParser((parsed) => ((seen.parsed = parsed), parsed.json()));
      },
    };
    const server = createServer(bare({ schema, maxRequestBodySize: 1000, plugins: [recordParsed] }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const body = '{"query":"{ __typename }"}';
      await fetch(`http://127.0.0.1:${port}/graphql`, { method: 'POST', headers: JSON_TYPE, body });
      expect(seen.parsed).toBeDefined();
      expect(seen.parsed).not.toBe(seen.given);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
