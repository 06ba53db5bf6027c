/** What an auditEvents page resolves to: its edges (cursors encoded on demand) and pageInfo. */
import type { PageInfoShape } from '@pothos/plugin-relay';
import type { AuditRecord } from '../../../upstream/identity/schemas.js';
import type { AuditRowResult } from '../../../upstream/types.js';

export type UnreadableRow = { readonly position: number; readonly reason: string };

/** The cursor is encoded only when a client selects it: a 5000-row listing rarely does. */
export class AuditEdge {
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
export function edgesOf(
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
export function pageInfoOf(start: number, count: number, hasNextPage: boolean, cursorAt: (position: number) => string): PageInfoShape {
  return {
    hasNextPage,
    hasPreviousPage: start > 0,
    startCursor: count > 0 ? cursorAt(start) : null,
    endCursor: count > 0 ? cursorAt(start + count - 1) : null,
  };
}
