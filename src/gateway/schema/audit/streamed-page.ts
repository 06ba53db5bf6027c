/**
 * A forward page whose `edges` the client asked to @stream, read upstream in chunks: the chunk
 * reads start together (about one round trip, as a single read would be), the small first chunk
 * answers first, and each chunk's edges leave as soon as it and the ones before it have arrived.
 * pageInfo and totalCount settle once the last chunk is in (clients put them in a @defer fragment).
 */
import {
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  type GraphQLResolveInfo,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import type { PageInfoShape } from '@pothos/plugin-relay';
import type { GatewayContext } from '../../context.js';
import type { AuditRowResult } from '../../../upstream/types.js';
import { streamDirective } from '../client-schema.js';
import type { AuditConnectionResult, UnreadableRow } from './connection-result.js';
import { cursorEncoder } from '../../../audit/paging/cursor.js';
import { PositionedEdge, type AuditEdge } from '../../../audit/paging/edge.js';
import { readRange } from './read-range.js';
import type { AuditScope } from '../../../audit/paging/scope.js';
import type { WindowSize } from './total-count.js';

/** Rows of the first chunk: enough for a first screen, quick to read. */
export const FIRST_CHUNK_ROWS = 100;
/** Rows of every later chunk. */
const CHUNK_ROWS = 1000;

/** Whether this auditEvents field selects `edges` with an active @stream (and not @skip-ped away). */
export function streamsEdges(info: GraphQLResolveInfo): boolean {
  const seen = new Set<string>();
  const included = (node: SelectionNode) =>
    getDirectiveValues(GraphQLSkipDirective, node, info.variableValues)?.['if'] !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, info.variableValues)?.['if'] !== false;
  const visit = (selectionSet: SelectionSetNode): boolean =>
    selectionSet.selections.some((selection) => {
      if (!included(selection)) return false;
      if (selection.kind === Kind.FIELD) {
        // Stryker disable next-line ConditionalExpression: edges is the connection's only list field, and validation allows @stream on list fields only
        if (selection.name.value !== 'edges') return false;
        const stream = getDirectiveValues(streamDirective, selection, info.variableValues);
        return stream !== undefined && stream['if'] !== false;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) return visit(selection.selectionSet);
      // Each fragment is looked into once: spreads that repeat would otherwise cost 2^depth visits.
      if (seen.has(selection.name.value)) return false;
      seen.add(selection.name.value);
      // Validation: every spread names a fragment of the document, and auditEvents has a selection set.
      return visit(info.fragments[selection.name.value]!.selectionSet);
    });
  return info.fieldNodes.some((node) => visit(node.selectionSet!));
}

type RowErrorReporter = (rows: readonly UnreadableRow[]) => void;

/** The page [start, end) in chunks; the row at `end` (read with the last chunk) gives hasNextPage. */
export function streamedConnection(
  context: GatewayContext,
  scope: AuditScope,
  start: number,
  end: number,
  reportUnreadable: RowErrorReporter,
): AuditConnectionResult {
  const cursorAt = cursorEncoder(scope);
  const chunks: { from: number; size: number; rows: Promise<readonly AuditRowResult[]> }[] = [];
  // The request's loader answers a batch when all its calls are done: each chunk gets a batch
  // of its own (one event-loop turn apart), so the first is not held back by the largest.
  let turn = Promise.resolve();
  for (let next = start; next < end; ) {
    const from = next;
    const size = Math.min(from === start ? FIRST_CHUNK_ROWS : CHUNK_ROWS, end - from);
    const isLast = from + size === end;
    const rows = turn.then(() => readRange(context, scope, from, isLast ? size + 1 : size));
    turn = turn.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    // Every chunk is awaited by the edges below, or by nobody once the client has gone away.
    rows.catch(() => undefined);
    chunks.push({ from, size, rows });
    next += size;
  }

  let settle!: (outcome: { pageInfo: PageInfoShape; size: WindowSize }) => void;
  let fail!: (error: unknown) => void;
  const done = new Promise<{ pageInfo: PageInfoShape; size: WindowSize }>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  done.catch(() => undefined);

  async function* edges(): AsyncGenerator<AuditEdge> {
    let count = 0;
    let hasNextPage = false;
    let windowSize: number | undefined;
    try {
      for (const chunk of chunks) {
        const rows = await chunk.rows;
        const unreadable: UnreadableRow[] = [];
        const batch: AuditEdge[] = [];
        for (let i = 0; i < Math.min(rows.length, chunk.size); i++) {
          const row = rows[i]!;
          if (row.ok) batch.push(new PositionedEdge(row.record, chunk.from + i, cursorAt));
          else unreadable.push({ position: chunk.from + i, reason: row.reason });
        }
        if (unreadable.length > 0) reportUnreadable(unreadable);
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
      const last = start + count - 1;
      settle({
        pageInfo: {
          hasNextPage,
          hasPreviousPage: start > 0,
          startCursor: count > 0 ? cursorAt(start) : null,
          endCursor: count > 0 ? cursorAt(last) : null,
        },
        size:
          windowSize === undefined
            ? // Stryker disable next-line ObjectLiteral,BooleanLiteral: countWindow asks only whether the size is exact
              { unknown: true }
            : { exact: windowSize },
      });
    } catch (error) {
      fail(error);
      throw error;
    } finally {
      // Stopped early (the client went away, or an edge could not be completed and the executor
      // ended the stream there): whatever waits for pageInfo stops waiting too.
      // After settle or fail this changes nothing.
      fail(new Error('The streamed page was not read to its end.'));
    }
  }

  const pageInfo = done.then((outcome) => outcome.pageInfo);
  const size = done.then((outcome) => outcome.size);
  // Each is awaited only when selected; a failed read is reported on edges either way.
  pageInfo.catch(() => undefined);
  size.catch(() => undefined);
  return {
    // The incremental executor takes any async iterable for a list field, and a promise for an object.
    edges: edges() as unknown as AuditEdge[],
    pageInfo: pageInfo as unknown as PageInfoShape,
    window: { from: scope.fromMillis, to: scope.toMillis },
    scope,
    size,
  };
}
