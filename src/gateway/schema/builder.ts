/** The Pothos builder: plugins and scalars only. Types live in one file per domain. */
import SchemaBuilder from '@pothos/core';
import DirectivePlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin from '@pothos/plugin-relay';
import { DateTimeISOResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars';
import type { GatewayContext } from '../context.js';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string | number };
    SafeInt: { Input: number; Output: number };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [DirectivePlugin, RelayPlugin, FederationPlugin],
  defaultFieldNullability: false,
  relay: {
    cursorType: 'String',
    // Ids are upstream ids, not global ids: no `node`/`nodes` root fields.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    // Other Relay subgraphs define PageInfo too; composition needs it shareable.
    pageInfoTypeOptions: {
      shareable: true,
      description: 'Where a page sits in its connection, and the cursors to page on from.',
    },
    hasNextPageFieldOptions: { description: 'Whether a record follows the last one of this page (exact).' },
    hasPreviousPageFieldOptions: { description: 'Whether a record precedes the first one of this page (exact).' },
    startCursorFieldOptions: { description: 'Cursor of the first position of the page: `before` for the previous page. Null when the page is empty.' },
    endCursorFieldOptions: { description: 'Cursor of the last position of the page: `after` for the next page. Null when the page is empty.' },
    firstArgOptions: { description: 'Page forward: at most this many records after `after` (default 50, largest 5000).' },
    afterArgOptions: { description: 'Cursor (endCursor or an edge cursor) to page forward from; the record it names is not repeated.' },
    lastArgOptions: { description: 'Page backward: at most this many records before `before`, or the last ones of the window.' },
    beforeArgOptions: { description: 'Cursor (startCursor or an edge cursor) to page backward from; the record it names is not repeated.' },
    cursorFieldOptions: { description: "Opaque cursor of this edge's position: pass it as `after` or `before`." },
    edgesFieldOptions: { description: 'The records of this page, in order, each with its cursor.' },
    pageInfoFieldOptions: { description: 'Whether more pages exist, and the cursors to fetch them.' },
  },
});

export type ObjectFields<Parent> = PothosSchemaTypes.ObjectFieldBuilder<typeof builder.$inferSchemaTypes, Parent>;
export type InterfaceFields<Parent> = PothosSchemaTypes.InterfaceFieldBuilder<typeof builder.$inferSchemaTypes, Parent>;

// DateTimeISO writes the ISO text itself; graphql-scalars' DateTime leaves a Date to JSON.stringify.
builder.addScalarType('DateTime', DateTimeISOResolver, {
  description: 'ISO-8601 date-time in UTC with milliseconds, e.g. 2026-11-21T10:15:30.123Z.',
});
builder.addScalarType('SafeInt', SafeIntResolver, {
  description:
    'Integer in the range of a JavaScript safe integer (|n| <= 2^53-1). Used for byte counts and ids that outgrow a 32-bit Int.',
});
builder.addScalarType('JSON', JSONResolver, { description: 'Any JSON value.' });

builder.queryType({ description: 'Audit records of the identity service and update sessions of the content library.' });
