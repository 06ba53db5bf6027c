/** Resolves an auditEvents page: edges (cursors encoded on demand) and pageInfo, whole or @streamed in chunks. */
import { createContextCache } from '@pothos/core';
import type { PageInfoShape } from '@pothos/plugin-relay';
import { getDirectiveValues, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { collectSubfields } from 'graphql/execution/collectFields.js';
import type { GatewayContext } from '../../context.js';
import { ErrorCode } from '../../../lib/errors.js';
import { cursorEncoder } from '../../../audit/paging/cursor.js';
import { planPage, readPage, type AuditConnectionArgs } from '../../../audit/paging/page.js';
import { countWindow, windowReader, type WindowReader } from '../../../audit/paging/window.js';
import type { AuditRecord } from '../../../upstream/identity/schemas.js';
import type { AuditRowResult } from '../../../upstream/types.js';
import { reportRowErrors } from '../row-errors.js';

type UnreadableRow = { readonly position: number; readonly reason: string };

/** The cursor is encoded only when a client selects it: a 5000-row listing rarely does. */
class AuditEdge {
  constructor(
    readonly node: AuditRecord,
    private readonly position: number,
    private readonly cursorAt: (position: number) => string,
  ) {}

  get cursor(): string {
    return this.cursorAt(this.position);
  }
}

/** Edges of rows read from position `from`; unreadable rows are left out and handed to `report`. */
function edgesOf(
  rows: readonly AuditRowResult[],
  from: number,
  cursorAt: (position: number) => string,
  report: (rows: readonly UnreadableRow[]) => void,
): AuditEdge[] {
  const edges: AuditEdge[] = [];
  const unreadable: UnreadableRow[] = [];
  rows.forEach((row, i) => {
    if (row.ok) edges.push(new AuditEdge(row.record, from + i, cursorAt));
    else unreadable.push({ position: from + i, reason: row.reason });
  });
  if (unreadable.length > 0) report(unreadable);
  return edges;
}

/** Cursors of the first and last positions even when unreadable: paging on never skips nor repeats a row. */
function pageInfoOf(start: number, count: number, hasNextPage: boolean, cursorAt: (position: number) => string): PageInfoShape {
  return {
    hasNextPage,
    hasPreviousPage: start > 0,
    startCursor: count > 0 ? cursorAt(start) : null,
    endCursor: count > 0 ? cursorAt(start + count - 1) : null,
  };
}

/** Enough for a first screen, quick to read. */
export const FIRST_CHUNK_ROWS = 100;
const CHUNK_ROWS = 1000;

/** Whether this auditEvents field selects `edges` with an active @stream (fields as the executor collects them). */
function streamsEdges(info: GraphQLResolveInfo): boolean {
  const { schema, fragments, variableValues, fieldNodes } = info;
  // The executing schema has @stream when the defer-stream plugin runs; without it no document may use it.
  const stream = schema.getDirective('stream');
  if (!stream) return false;
  const fields = collectSubfields(schema, fragments, variableValues, info.returnType as GraphQLObjectType, fieldNodes);
  // Validation allows @stream on list fields only, and edges is the connection's only one.
  return [...fields.values()].some((nodes) =>
    nodes.some((node) => getDirectiveValues(stream, node, variableValues)?.['if'] === true),
  );
}

/** The page [start, end) in chunks; the row at `end` (read with the last chunk) gives hasNextPage. */
function streamedConnection(
  reader: WindowReader,
  cursorAt: (position: number) => string,
  start: number,
  end: number,
  reportUnreadable: (rows: readonly UnreadableRow[]) => void,
): { edges: AuditEdge[]; pageInfo: PageInfoShape; windowSize: Promise<number | undefined> } {
  const chunks: { from: number; size: number; rows: Promise<readonly AuditRowResult[]> }[] = [];
  // The request's loader answers a batch when all its calls are done: each chunk gets a batch
  // of its own (one event-loop turn apart), so the first is not held back by the largest.
  let turn = Promise.resolve();
  for (let from = start; from < end; ) {
    const size = Math.min(from === start ? FIRST_CHUNK_ROWS : CHUNK_ROWS, end - from);
    const at = from;
    const rows = turn.then(() => reader.rows(at, at + size === end ? size + 1 : size));
    turn = turn.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    // Awaited by the edges below, or by nobody once the client has gone away.
    rows.catch(() => undefined);
    chunks.push({ from, size, rows });
    from += size;
  }

  let settle!: (outcome: { pageInfo: PageInfoShape; windowSize: number | undefined }) => void;
  let fail!: (error: unknown) => void;
  const done = new Promise<Parameters<typeof settle>[0]>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  async function* edges(): AsyncGenerator<AuditEdge> {
    let count = 0;
    let hasNextPage = false;
    let windowSize: number | undefined;
    try {
      for (const chunk of chunks) {
        const rows = await chunk.rows;
        const batch = edgesOf(rows.slice(0, chunk.size), chunk.from, cursorAt, reportUnreadable);
        count += Math.min(rows.length, chunk.size);
        yield* batch;
        if (rows.length < chunk.size) {
          // The window ends inside this chunk: later chunks can only be empty.
          if (rows.length > 0 || chunk.from === 0 || chunk.from > start) windowSize = chunk.from + rows.length;
          break;
        }
        if (rows.length > chunk.size) hasNextPage = true;
        else if (chunk.from + chunk.size === end) windowSize = end;
      }
      settle({ pageInfo: pageInfoOf(start, count, hasNextPage, cursorAt), windowSize });
    } catch (error) {
      fail(error);
      throw error;
    } finally {
      // Stopped early (the client went away, or an edge failed): whatever waits for pageInfo stops too.
      fail(new Error('The streamed page was not read to its end.'));
    }
  }

  const pageInfo = done.then((outcome) => outcome.pageInfo);
  const windowSize = done.then((outcome) => outcome.windowSize);
  // Each is awaited only when selected; a failed read is reported on edges either way.
  pageInfo.catch(() => undefined);
  windowSize.catch(() => undefined);
  return {
    // The incremental executor takes any async iterable for a list field, and a promise for an object.
    edges: edges() as unknown as AuditEdge[],
    pageInfo: pageInfo as unknown as PageInfoShape,
    windowSize,
  };
}

/** One "now" per request: first pages of several aliases pin the same window, and the loader dedupes their calls. */
const requestTime = createContextCache((_context: GatewayContext) => Date.now());

export async function resolveAuditConnection(args: AuditConnectionArgs, context: GatewayContext, info: GraphQLResolveInfo) {
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
  return {
    edges: edgesOf(page.rows, page.start, cursorAt, report),
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
