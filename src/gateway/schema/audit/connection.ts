/** Resolves Query.auditEvents: arguments -> plan -> upstream reads -> edges and exact pageInfo. */
import { createContextCache } from '@pothos/core';
import type { GraphQLResolveInfo } from 'graphql';
import type { GatewayContext } from '../../context.js';
import { ErrorCode } from '../../../lib/errors.js';
import { cursorEncoder } from '../../../audit/paging/cursor.js';
import { planPage, readPage, type AuditConnectionArgs } from '../../../audit/paging/page.js';
import { countWindow, windowReader } from '../../../audit/paging/window.js';
import { reportRowErrors } from '../row-errors.js';
import { edgesOf, pageInfoOf, type AuditConnectionResult, type UnreadableRow } from './connection-types.js';
import { FIRST_CHUNK_ROWS, streamedConnection, streamsEdges } from './streamed-page.js';

/**
 * One "now" per GraphQL request: first pages of several aliases pin the same window, so their
 * identical upstream calls are made once (the loader dedupes by query).
 */
const requestTime = createContextCache((_context: GatewayContext) => Date.now());

export async function resolveAuditConnection(
  args: AuditConnectionArgs,
  context: GatewayContext,
  info: GraphQLResolveInfo,
): Promise<AuditConnectionResult> {
  const plan = planPage(args, requestTime(context));
  const reader = windowReader((query) => context.loaders.auditReport.load(query), plan.scope);
  const cursorAt = cursorEncoder(plan.scope);
  const window = { from: plan.scope.fromMillis, to: plan.scope.toMillis };
  const report = (rows: readonly UnreadableRow[]) => reportUnreadable(context, info, rows);
  if (!plan.needsProbe && plan.size > FIRST_CHUNK_ROWS && streamsEdges(info)) {
    const page = streamedConnection(reader, cursorAt, plan.offset, plan.offset + plan.size, report);
    return { ...page, window, totalCount: () => countWindow(reader, page.windowSize) };
  }
  const page = await readPage(plan, reader);
  const unreadable: UnreadableRow[] = [];
  const edges = edgesOf(page.rows, page.start, cursorAt, unreadable);
  if (unreadable.length > 0) report(unreadable);
  return {
    edges,
    pageInfo: pageInfoOf(page.start, page.count, page.hasNextPage, cursorAt),
    window,
    totalCount: () => countWindow(reader, page.windowSize),
  };
}

/** The reasons go to the log, with the request id, never to the client. */
function reportUnreadable(context: GatewayContext, info: GraphQLResolveInfo, rows: readonly UnreadableRow[]): void {
  context.log.warn(
    { code: ErrorCode.UPSTREAM_INVALID_RESPONSE, service: 'identity', positions: rows.slice(0, 20), unreadable: rows.length },
    'auditEvents: rows left out of the page because their records could not be read',
  );
  reportRowErrors(
    context,
    info,
    rows.map((row) => row.position),
    (position) => `Audit record at position ${position} of the window could not be read.`,
    (count, from, to) => `${count} more audit records of this page (positions ${from} to ${to} of the window) could not be read.`,
  );
}
