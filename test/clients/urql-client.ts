/**
 * urql with graphcache as the README's client section sets it up: the client schema (graphcache
 * writes every fragment of a union when it only has possibleTypes, and warns about each field that
 * is not there), keys (uuid for records; connection parts embedded in their parent) and
 * relayPagination().
 */
import { readFileSync } from 'node:fs';
import { Client, fetchExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import { buildSchema, introspectionFromSchema } from 'graphql';
import introspection from '../../schema/possible-types.json' with { type: 'json' };
import { AuditPageDocument } from './documents.js';
import type { AuditPageQuery, AuditPageQueryVariables } from './generated/operations.js';

const byUuid = (record: { uuid?: unknown }) => (typeof record.uuid === 'string' ? record.uuid : null);
const embedded = () => null;

/** What graphcache's `schema` takes; a web app would generate this JSON at build time. */
export const clientIntrospection = introspectionFromSchema(
  buildSchema(readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8')),
);

export function createUrqlClient(url: string, fetch: typeof globalThis.fetch): Client {
  const recordKeys = Object.fromEntries(introspection.possibleTypes.AuditRecord.map((type) => [type, byUuid]));
  return new Client({
    url,
    fetch,
    // urql sends short queries as GET by default; the gateway's CSRF check wants a header a
    // plain GET lacks (x-api-key does, where keys are configured). POST needs none.
    preferGetMethod: false,
    exchanges: [
      cacheExchange({
        schema: clientIntrospection,
        keys: {
          ...recordKeys,
          AuditActor: embedded,
          AuditWindow: embedded,
          AuditEventConnection: embedded,
          AuditEventEdge: embedded,
          PageInfo: embedded,
        },
        resolvers: { Query: { auditEvents: relayPagination() } },
      }),
      fetchExchange,
    ],
  });
}

/** The first `pages` pages; relayPagination merges them into the latest query's result. */
export async function pageWithUrql(
  client: Client,
  variables: Omit<AuditPageQueryVariables, 'after'>,
  pages: number,
): Promise<NonNullable<AuditPageQuery['auditEvents']>> {
  let after: string | null = null;
  let page: AuditPageQuery['auditEvents'] | undefined;
  for (let i = 0; i < pages; i++) {
    const result = await client.query(AuditPageDocument, { ...variables, after }).toPromise();
    if (result.error) throw result.error;
    page = result.data?.auditEvents;
    if (!page?.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  if (!page) throw new Error('no auditEvents');
  return page;
}
