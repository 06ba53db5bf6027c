/**
 * A @stream consumer without a client library: posts StreamedAuditPage with
 * `accept: multipart/mixed` and hands each batch of rows to `onRows` as its part arrives.
 */
import { print } from 'graphql';
import { StreamedAuditPageDocument } from './documents.js';
import type { StreamedAuditPageQuery, StreamedAuditPageQueryVariables } from './generated/operations.js';
import { multipartParts } from './incremental-parts.js';

// auditEvents is null when the identity service cannot answer.
type Page = NonNullable<StreamedAuditPageQuery['auditEvents']>;
type Edge = Page['edges'][number];
type PageInfo = NonNullable<Page['pageInfo']>;

export async function streamAuditPage(
  url: string,
  fetch: typeof globalThis.fetch,
  variables: StreamedAuditPageQueryVariables,
  onRows: (rows: readonly Edge[], hasNext: boolean) => void,
): Promise<{ edges: Edge[]; pageInfo: PageInfo | undefined; errors: unknown[] }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed, application/json' },
    body: JSON.stringify({ query: print(StreamedAuditPageDocument), variables }),
  });
  const edges: Edge[] = [];
  const errors: unknown[] = [];
  let pageInfo: PageInfo | undefined;
  for await (const part of multipartParts(response)) {
    errors.push(...(part.errors ?? []));
    const initial = part.data as StreamedAuditPageQuery | undefined;
    const rows: Edge[] = [...(initial?.auditEvents?.edges ?? [])];
    pageInfo ??= initial?.auditEvents?.pageInfo ?? undefined;
    for (const item of part.incremental ?? []) {
      errors.push(...(item.errors ?? []));
      if (item.items) rows.push(...(item.items as Edge[]));
      else if (item.data?.pageInfo) pageInfo = item.data.pageInfo as PageInfo;
    }
    edges.push(...rows);
    if (rows.length > 0) onRows(rows, part.hasNext ?? false);
  }
  return { edges, pageInfo, errors };
}
