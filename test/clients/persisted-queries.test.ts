/**
 * Automatic persisted queries without a persisted-operations file, with Apollo Client's own
 * PersistedQueryLink: the first request sends only the hash, the gateway answers
 * PERSISTED_QUERY_NOT_FOUND, the link retries with the document, which registers it; later
 * requests send the hash alone and run. Raw protocol checks cover what the link never sends.
 */
import { createHash } from 'node:crypto';
import { ApolloClient, gql, HttpLink, InMemoryCache, type TypedDocumentNode } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersistedQueryStore } from '../../src/gateway/plugins/auth/automatic-persisted-queries.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testFile } from '../helpers/temp-file.js';
import { GATEWAY_URL, gatewayFetch, type RecordedRequest } from './gateway-fetch.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ simulator: { eventCount: 200 } });
});
afterAll(() => gw?.close());

const post = (body: unknown) =>
  gw.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('automatic persisted queries', () => {
  it("work with Apollo Client's PersistedQueryLink: not found, registered on retry, then by hash alone", async () => {
    const requests: RecordedRequest[] = [];
    const client = new ApolloClient({
      link: new PersistedQueryLink({ sha256 }).concat(new HttpLink({ uri: GATEWAY_URL, fetch: gatewayFetch(gw, requests) })),
      cache: new InMemoryCache(),
    });
    const query: TypedDocumentNode<{ auditEvents: { edges: { cursor: string }[] } }, { first: number }> = gql`
      query ApqPage($first: Int!) {
        auditEvents(first: $first) {
          edges {
            cursor
          }
        }
      }
    `;
    const first = await client.query({ query, variables: { first: 3 }, fetchPolicy: 'network-only' });
    expect(first.data?.auditEvents.edges).toHaveLength(3);
    const [hashOnly, retry] = requests as [RecordedRequest & { body: any }, RecordedRequest & { body: any }];
    expect(requests).toHaveLength(2);
    expect(hashOnly.body.query).toBeUndefined();
    expect(hashOnly.body.extensions.persistedQuery.sha256Hash).toMatch(/^[0-9a-f]{64}$/);
    expect(retry.body.query).toContain('query ApqPage');

    const again = await client.query({ query, variables: { first: 2 }, fetchPolicy: 'network-only' });
    expect(again.data?.auditEvents.edges).toHaveLength(2);
    expect(requests).toHaveLength(3);
    expect((requests[2]!.body as any).query).toBeUndefined();
  });

  it('answers an unknown hash with PERSISTED_QUERY_NOT_FOUND and reaches no upstream', async () => {
    gw.sim.control.resetCounters();
    const response = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } });
    const body = (await response.json()) as any;
    expect(body.errors[0]).toMatchObject({ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } });
    expect(body.data ?? null).toBeNull();
    expect(gw.sim.control.counters().audit).toBe(0);
  });

  it('refuses to register a document under a hash that is not its own: 400 BAD_REQUEST', async () => {
    const document = '{ auditEvents(first: 1) { edges { cursor } } }';
    const wrong = sha256('something else');
    const response = await post({ query: document, extensions: { persistedQuery: { version: 1, sha256Hash: wrong } } });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'The persisted query hash (extensions.persistedQuery.sha256Hash) does not match the query.',
          extensions: { code: 'BAD_REQUEST' },
        },
      ],
    });
    const lookup = (await (await post({ extensions: { persistedQuery: { version: 1, sha256Hash: wrong } } })).json()) as any;
    expect(lookup.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('with a persisted-operations file', () => {
  it('registers nothing: only the listed operations run by hash', async () => {
    const listed = '{ auditEvents(first: 1) { edges { cursor } } }';
    const file = testFile('operations.json', JSON.stringify({ [sha256(listed)]: listed }));
    const strict = await startTestGateway({ env: { PERSISTED_OPERATIONS_FILE: file, PERSISTED_OPERATIONS_ONLY: 'true' } });
    try {
      const send = (body: unknown) =>
        strict
          .fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
          .then((response) => response.json() as Promise<any>);
      const other = '{ auditEvents(first: 2) { edges { cursor } } }';
      const persistedQuery = { version: 1, sha256Hash: sha256(other) };
      expect((await send({ extensions: { persistedQuery } })).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
      // The retry an APQ client makes is refused, and registers nothing.
      expect((await send({ query: other, extensions: { persistedQuery } })).errors[0].extensions.code).toBe('PERSISTED_QUERY_ONLY');
      expect((await send({ extensions: { persistedQuery } })).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
      const known = await send({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256(listed) } } });
      expect(known.data.auditEvents.edges).toHaveLength(1);
    } finally {
      await strict.close();
    }
  });
});

describe('persisted query store', () => {
  const hashOf = (i: number) => sha256(`doc ${i}`);

  it('keeps at most maxEntries documents, evicting the least recently used', () => {
    const store = createPersistedQueryStore({ maxEntries: 2, maxChars: 1000, ttlMs: 60_000 });
    store.set(hashOf(1), 'doc 1');
    store.set(hashOf(2), 'doc 2');
    expect(store.get(hashOf(1))).toBe('doc 1');
    store.set(hashOf(3), 'doc 3');
    expect(store.get(hashOf(2))).toBeUndefined();
    expect(store.get(hashOf(1))).toBe('doc 1');
    expect(store.get(hashOf(3))).toBe('doc 3');
  });

  it('keeps at most maxChars of documents, and never one larger than that', () => {
    const store = createPersistedQueryStore({ maxEntries: 100, maxChars: 10, ttlMs: 60_000 });
    store.set(hashOf(1), 'x'.repeat(6));
    store.set(hashOf(2), 'y'.repeat(6));
    expect(store.get(hashOf(1))).toBeUndefined();
    expect(store.get(hashOf(2))).toBe('yyyyyy');
    store.set(hashOf(3), 'z'.repeat(11));
    expect(store.get(hashOf(3))).toBeUndefined();
  });

  it('looks up SHA-256 hex hashes only', () => {
    const store = createPersistedQueryStore();
    expect(store.get('not-a-hash')).toBeUndefined();
    expect(store.get('A'.repeat(64))).toBeUndefined();
  });
});
