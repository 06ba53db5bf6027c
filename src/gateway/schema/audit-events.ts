/** Query.auditEvents: a Relay connection over the audit report, with its filter (paging: src/audit/paging/). */
import { builder } from './builder.js';
import { resolveAuditConnection } from './audit/connection.js';
import { AuditEventUnion } from './audit/record-types.js';

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

const AuditEventFilterInput = builder.inputType('AuditEventFilter', {
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

const AuditWindowRef = builder.objectRef<{ from: number; to: number }>('AuditWindow').implement({
  description: 'The time window (both ends included) every cursor of a connection is pinned to.',
  fields: (t) => ({
    from: t.expose('from', { type: 'DateTime', description: 'Oldest time included.' }),
    to: t.expose('to', { type: 'DateTime', description: 'Newest time included: `filter.to`, or the time of the first page.' }),
  }),
});

builder.queryField('auditEvents', (t) =>
  t.connection(
    {
      type: AuditEventUnion,
      description:
        'Audit records, newest first. Cursors pin the time window and the filter, so paging stays consistent while new events arrive. Default page: first 50; largest: 5000. hasNextPage and hasPreviousPage are exact in both directions. Null, with an error, when the identity service cannot answer (or the arguments are invalid), so that the other fields of the same operation still come back.',
      // Nullable so that one upstream down never empties the whole response.
      nullable: true,
      edgesNullable: { list: false, items: false },
      nodeNullable: false,
      args: {
        filter: t.arg({
          type: AuditEventFilterInput,
          description: 'Time window and record filter. Only needed on the first page: cursors carry it.',
        }),
      },
      resolve: (_root, args, context, info) => resolveAuditConnection(args, context, info),
    },
    {
      name: 'AuditEventConnection',
      description: 'A page of audit records, with the cursors and the pinned window to page on.',
      fields: (c) => ({
        window: c.expose('window', {
          type: AuditWindowRef,
          description: 'The time window every cursor of this connection is pinned to.',
        }),
        totalCount: c.int({
          description:
            'Exact number of records in the pinned window and filter. The upstream has no count: the gateway finds it with one-row probes, and only when this field is selected.',
          resolve: (connection) => connection.totalCount(),
        }),
      }),
    },
    {
      name: 'AuditEventEdge',
      description: 'One audit record of a page, with its position as a cursor.',
      nodeField: { description: 'The audit record: one member of the AuditEvent union.' },
    },
  ),
);
