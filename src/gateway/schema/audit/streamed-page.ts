/** A forward page whose `edges` are @streamed in chunks; pageInfo and totalCount settle with the last chunk. */
import { getDirectiveValues, type GraphQLObjectType, type GraphQLResolveInfo } from 'graphql';
import { collectSubfields } from 'graphql/execution/collectFields.js';
import type { PageInfoShape } from '@pothos/plugin-relay';
import type { AuditRowResult } from '../../../upstream/types.js';
import type { WindowReader } from '../../../audit/paging/window.js';
import { edgesOf, pageInfoOf, type AuditEdge, type UnreadableRow } from './connection-types.js';

/** Enough for a first screen, quick to read. */
export const FIRST_CHUNK_ROWS = 100;
const CHUNK_ROWS = 1000;

/** Whether this auditEvents field selects `edges` with an active @stream (fields as the executor collects them). */
export function streamsEdges(info: GraphQLResolveInfo): boolean {
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
export function streamedConnection(
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
