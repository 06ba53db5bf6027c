/**
 * Apollo Client as the README's client section sets it up: the shipped possibleTypes (without
 * them the cache drops every field selected through `... on AuditRecord`), relay-style paging
 * keyed by the filter, and records identified by uuid.
 */
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import introspection from '../../schema/possible-types.json' with { type: 'json' };
import { AuditPageDocument } from './documents.js';
import type { AuditPageQuery, AuditPageQueryVariables } from './generated/operations.js';

export function createApolloClient(uri: string, fetch: typeof globalThis.fetch): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({ uri, fetch }),
    cache: new InMemoryCache({
      possibleTypes: introspection.possibleTypes,
      typePolicies: {
        // Every member of AuditEvent implements AuditRecord: one policy covers them all.
        AuditRecord: { keyFields: ['uuid'] },
        Query: { fields: { auditEvents: relayStylePagination(['filter']) } },
      },
    }),
  });
}

/** The first `pages` pages of `pageSize` records, merged by the cache into one list. */
export async function pageWithApollo(
  client: ApolloClient,
  variables: Omit<AuditPageQueryVariables, 'after'>,
  pages: number,
): Promise<NonNullable<AuditPageQuery['auditEvents']>> {
  const watch = client.watchQuery({ query: AuditPageDocument, variables });
  const first = await watch.refetch();
  let page = first.data?.auditEvents;
  for (let i = 1; i < pages && page?.pageInfo.hasNextPage; i++) {
    await watch.fetchMore({ variables: { after: page.pageInfo.endCursor } });
    // The merged list, as the cache now holds it for these variables.
    page = client.readQuery({ query: AuditPageDocument, variables })?.auditEvents;
  }
  if (!page) throw new Error('no auditEvents in the cache');
  return page;
}
