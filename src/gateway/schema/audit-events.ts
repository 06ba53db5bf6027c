/**
 * Query.auditEvents: audit records, newest first, as a Relay connection over the audit report.
 * The paging algorithm is src/audit/paging/; ./audit/ resolves the connection and holds the record types.
 */
import { builder } from './builder.js';
import { resolveAuditConnection } from './audit/connection.js';
import { AuditEventFilterInput, AuditWindowRef } from './audit/connection-types.js';
import { AuditEventUnion } from './audit/record-types.js';

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
        window: c.field({
          type: AuditWindowRef,
          description: 'The time window every cursor of this connection is pinned to.',
          resolve: (connection) => connection.window,
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
