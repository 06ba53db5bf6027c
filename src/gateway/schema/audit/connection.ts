/** Resolves Query.auditEvents: arguments -> plan -> upstream reads -> edges and exact pageInfo. */
import { createContextCache } from '@pothos/core';
import { GraphQLError, responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import type { GatewayContext } from '../../context.js';
import { ErrorCode, UpstreamError } from '../../../lib/errors.js';
import type { AuditRowResult } from '../../../upstream/types.js';
import { reportRowErrors } from '../row-errors.js';
import type { AuditConnectionResult, UnreadableRow } from './connection-result.js';
import { cursorEncoder } from '../../../audit/paging/cursor.js';
import { PositionedEdge, type AuditEdge } from '../../../audit/paging/edge.js';
import { parsePageRequest, type AuditConnectionArgs } from '../../../audit/paging/page-request.js';
import { planPage, type PagePlan, type PageSpan } from '../../../audit/paging/plan.js';
import { probeRound, readRange } from './read-range.js';
import type { AuditScope } from '../../../audit/paging/scope.js';
import { FIRST_CHUNK_ROWS, streamedConnection, streamsEdges } from './streamed-page.js';
import { locateWindowEnd } from '../../../audit/paging/window-end.js';

export type { AuditConnectionResult } from './connection-result.js';

/** Error entries per page beyond which the rest are summed up in one entry. */
const MAX_ROW_ERRORS_PER_PAGE = 50;

/** The page's positions [start, start + count), held in rows[first ...]. */
interface PageRows extends PageSpan {
  readonly rows: readonly AuditRowResult[];
  readonly first: number;
}

export async function resolveAuditConnection(
  args: AuditConnectionArgs,
  context: GatewayContext,
  info: GraphQLResolveInfo,
): Promise<AuditConnectionResult> {
  const request = parsePageRequest(args, requestTime(context));
  const plan = planPage(request);
  if (
    !plan.needsProbe &&
    // Stryker disable next-line EqualityOperator: a page of one chunk or less reads the same single call either way
    plan.size > FIRST_CHUNK_ROWS &&
    streamsEdges(info)
  ) {
    return streamedConnection(context, request.scope, plan.offset, plan.offset + plan.size, (rows) =>
      reportRowErrors(context, rowErrors(context, info, rows)),
    );
  }
  const page = await readPage(context, request.scope, plan);
  return buildConnection(context, info, request.scope, page);
}

/**
 * One "now" per GraphQL request: first pages of several aliases pin the same window, so their
 * identical upstream calls are made once (the loader dedupes by query).
 */
const requestTime = createContextCache((_context: GatewayContext) => Date.now());

const inconsistent = (detail: Record<string, unknown>) =>
  new UpstreamError('UPSTREAM_INVALID_RESPONSE', 'identity', 'The audit report answered inconsistently while paging.', detail);

/** Executes the plan: probes for the window's end if it must, then one read. */
async function readPage(context: GatewayContext, scope: AuditScope, plan: PagePlan): Promise<PageRows> {
  const read = plan.needsProbe
    ? plan.afterProbe(await locateWindowEnd(probeRound(context, scope), plan.knownRow, plan.slack))
    : plan;
  const rows = await readRange(context, scope, read.offset, read.limit);
  if (rows.length < read.minRows) {
    throw inconsistent({ offset: read.offset, rows: rows.length, expectedRows: read.minRows });
  }
  const page = read.pageFor(rows.length);
  return { ...page, rows, first: page.start - read.offset };
}

function buildConnection(
  context: GatewayContext,
  info: GraphQLResolveInfo,
  scope: AuditScope,
  page: PageRows,
): AuditConnectionResult {
  const cursorAt = cursorEncoder(scope);
  const edges: AuditEdge[] = [];
  const unreadable: UnreadableRow[] = [];
  for (let i = 0; i < page.count; i++) {
    // pageFor counts only rows that were read.
    const row = page.rows[page.first + i]!;
    const position = page.start + i;
    if (row.ok) edges.push(new PositionedEdge(row.record, position, cursorAt));
    else unreadable.push({ position, reason: row.reason });
  }
  if (unreadable.length > 0) reportRowErrors(context, rowErrors(context, info, unreadable));
  const last = page.start + page.count - 1;
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.start > 0,
      // Cursors of the page's first and last positions, even when that row could not be read:
      // paging on from them never skips a record nor reports the same bad row twice.
      startCursor: page.count > 0 ? cursorAt(page.start) : null,
      endCursor: page.count > 0 ? cursorAt(last) : null,
    },
    window: { from: scope.fromMillis, to: scope.toMillis },
    scope,
    size:
      page.windowSize === undefined
        ? // Stryker disable next-line ObjectLiteral,BooleanLiteral: countWindow asks only whether the size is exact
          { unknown: true }
        : { exact: page.windowSize },
  };
}

/**
 * Client-safe entries (message and code only, no originalError): every masking setup passes them
 * as they are. The reasons go to the log, with the request id, never to the client.
 */
function rowErrors(
  context: GatewayContext,
  info: GraphQLResolveInfo,
  rows: readonly UnreadableRow[],
): GraphQLError[] {
  context.log.warn(
    { code: ErrorCode.UPSTREAM_INVALID_RESPONSE, service: 'identity', positions: rows.slice(0, 20), unreadable: rows.length },
    'auditEvents: rows left out of the page because their records could not be read',
  );
  const path = responsePathAsArray(info.path);
  const entry = (message: string) =>
    new GraphQLError(message, {
      nodes: info.fieldNodes,
      path,
      extensions: { code: ErrorCode.UPSTREAM_INVALID_RESPONSE },
    });
  const errors = rows
    .slice(0, MAX_ROW_ERRORS_PER_PAGE)
    .map(({ position }) => entry(`Audit record at position ${position} of the window could not be read.`));
  const rest = rows.slice(MAX_ROW_ERRORS_PER_PAGE);
  if (rest.length > 0) {
    const from = rest[0]!.position;
    const to = rest[rest.length - 1]!.position;
    errors.push(
      entry(`${rest.length} more audit records of this page (positions ${from} to ${to} of the window) could not be read.`),
    );
  }
  return errors;
}
