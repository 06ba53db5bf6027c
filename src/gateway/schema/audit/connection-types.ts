/** The auditEvents connection's types: filter input, action enum, window, and what a page resolves to. */
import type { PageInfoShape } from '@pothos/plugin-relay';
import type { AuditRecord } from '../../../upstream/identity/schemas.js';
import type { AuditRowResult } from '../../../upstream/types.js';
import { builder } from '../builder.js';

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

export const AuditActionEnum = builder.enumType('AuditAction', {
  description: 'The action filter; sent to the upstream in its own spelling (Create, Update, ...).',
  values: {
    CREATE: { value: 'Create', description: 'Object created.' },
    UPDATE: { value: 'Update', description: 'Object updated.' },
    DELETE: { value: 'Delete', description: 'Object deleted.' },
    LINK: { value: 'Link', description: 'Object linked.' },
    UNLINK: { value: 'Unlink', description: 'Object unlinked.' },
  } as const,
});

export const AuditEventFilterInput = builder.inputType('AuditEventFilter', {
  description: 'Which audit records a connection covers. Repeat it (or leave it out) when paging with a cursor.',
  fields: (t) => ({
    from: t.field({ type: 'DateTime', description: 'Oldest time included. Default: 72 hours before `to`.' }),
    to: t.field({
      type: 'DateTime',
      description: 'Newest time included. Default, and upper limit: the time the first page is read.',
    }),
    objectType: t.string({
      description:
        'Upstream objectType, case-sensitive, e.g. LOGIN, LAUNCH, Group. A known type in another case (login) is BAD_USER_INPUT; other values are passed on as given.',
    }),
    action: t.field({ type: AuditActionEnum, description: 'Further filter by action, for the types that take one.' }),
  }),
});

export const AuditWindowRef = builder.objectRef<{ from: number; to: number }>('AuditWindow').implement({
  description: 'The time window (both ends included) every cursor of a connection is pinned to.',
  fields: (t) => ({
    from: t.expose('from', { type: 'DateTime', description: 'Oldest time included.' }),
    to: t.expose('to', { type: 'DateTime', description: 'Newest time included: `filter.to`, or the time of the first page.' }),
  }),
});
