/** Resolves Query.auditEvents: arguments -> plan -> upstream reads -> edges and exact pageInfo. */
import { createContextCache } from '@pothos/core';
import { GraphQLError, responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import type { PageInfoShape } from '@pothos/plugin-relay';
import type { GatewayContext } from '../../context.js';
import { ErrorCode, UpstreamError } from '../../errors.js';
import type { AuditRowResult } from '../../upstream/types.js';
import { reportRowErrors } from '../../plugins/audit-row-errors.js';
import { cursorEncoder } from './cursor.js';
import { PositionedEdge, type AuditEdge } from './edge.js';
import { parsePageRequest, type AuditConnectionArgs, type PageRequest } from './page-request.js';
import { planPage, tailSlack, type PagePlan } from './paging-plan.js';
import { probeRound, readRange } from './read-range.js';
import type { AuditScope } from './scope.js';
import type { WindowSize } from './total-count.js';
import { FIRST_CHUNK_ROWS, streamedConnection, streamsEdges } from './streamed-page.js';
import { locateWindowEnd } from './window-end.js';

export type { AuditEdge } from './edge.js';

export interface AuditWindowShape {
  readonly from: number;
  readonly to: number;
}

export interface AuditConnectionResult {
  readonly edges: AuditEdge[];
  readonly pageInfo: PageInfoShape;
  readonly window: AuditWindowShape;
  /** For totalCount, counted only when selected. */
  readonly scope: AuditScope;
  readonly size: WindowSize | Promise<WindowSize>;
}

export interface UnreadableRow {
  readonly position: number;
  readonly reason: string;
}

/** Error entries per page beyond which the rest are summed up in one entry. */
const MAX_ROW_ERRORS_PER_PAGE = 50;

/** The page's positions [start, start + count), held in rows[first ...]. */
interface PageRows {
  readonly start: number;
  readonly count: number;
  readonly rows: readonly AuditRowResult[];
  readonly first: number;
  readonly hasNextPage: boolean;
  /** The window's size, when the read reached its end. */
  readonly windowSize?: number;
}

export async function resolveAuditConnection(
  args: AuditConnectionArgs,
  context: GatewayContext,
  info: GraphQLResolveInfo,
): Promise<AuditConnectionResult> {
  const request = parsePageRequest(args, requestTime(context));
  if (request.size === 0) return buildConnection(context, info, request.scope, await emptyPage(context, request));
  const plan = planPage(request);
  if (plan.kind === 'slice' && plan.end - plan.start > FIRST_CHUNK_ROWS && streamsEdges(info)) {
    return streamedConnection(context, request.scope, plan.start, plan.end, (rows) =>
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

/**
 * `first: 0` / `last: 0` never search for the window's end. A `before` cursor names a record that
 * follows, so nothing is read; otherwise one one-row read (shared by aliases of the same window)
 * says whether a record sits where the empty page is, which keeps hasNextPage / hasPreviousPage exact.
 */
async function emptyPage(context: GatewayContext, request: PageRequest): Promise<PageRows> {
  const empty = { count: 0, rows: [], first: 0 };
  if (request.hi !== undefined) {
    return { ...empty, start: request.direction === 'backward' ? request.hi : request.lo, hasNextPage: true };
  }
  const rowAtLo = (await readRange(context, request.scope, request.lo, 1)).length > 0;
  return request.direction === 'forward'
    ? { ...empty, start: request.lo, hasNextPage: rowAtLo }
    : // A backward page without `before` sits at the window's end: past the row at `lo`, if any.
      { ...empty, start: request.lo + (rowAtLo ? 1 : 0), hasNextPage: false };
}

const inconsistent = (detail: Record<string, unknown>) =>
  new UpstreamError('UPSTREAM_INVALID_RESPONSE', 'identity', 'The audit report answered inconsistently while paging.', detail);

async function readPage(context: GatewayContext, scope: AuditScope, plan: PagePlan): Promise<PageRows> {
  if (plan.kind === 'slice') {
    const size = plan.end - plan.start;
    const rows = await readRange(context, scope, plan.start, size + 1);
    // Fewer rows than asked: the window ends right after them (when it reaches plan.start at all).
    const reachedEnd = rows.length <= size && (rows.length > 0 || plan.start === 0);
    return {
      start: plan.start,
      count: Math.min(size, rows.length),
      rows,
      first: 0,
      hasNextPage: rows.length > size,
      ...(reachedEnd ? { windowSize: plan.start + rows.length } : {}),
    };
  }
  const end = await locateWindowEnd(probeRound(context, scope), plan.knownRow, tailSlack(plan.size));
  // The window has between lastPresent+1 and firstMissing rows: read from the earliest position
  // the page could start at up to firstMissing, and the rows returned say where it really ends.
  const readFrom = Math.max(plan.lo, end.lastPresent + 1 - plan.size);
  const rows = await readRange(context, scope, readFrom, end.firstMissing - readFrom);
  const windowEnd = readFrom + rows.length;
  // The probes saw a row at lastPresent; a read that ends before it contradicts them.
  if (windowEnd <= end.lastPresent) throw inconsistent({ lastPresent: end.lastPresent, windowEnd });
  const start = Math.max(plan.lo, windowEnd - plan.size);
  const count = Math.max(0, windowEnd - start);
  // Exact unless the upstream lost rows before `after` (the read then started past the end).
  const windowSize = readFrom <= end.firstMissing ? { windowSize: windowEnd } : {};
  return { start, count, rows, first: start - readFrom, hasNextPage: false, ...windowSize };
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
    const row = page.rows[page.first + i];
    const position = page.start + i;
    if (!row) throw inconsistent({ position });
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
    size: page.windowSize === undefined ? { unknown: true } : { exact: page.windowSize },
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
