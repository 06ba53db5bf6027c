/** The Pothos builder: plugins and scalars only. Types live in one file per domain. */
import SchemaBuilder from '@pothos/core';
import DirectivePlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin from '@pothos/plugin-relay';
import { DateTimeResolver, JSONResolver, SafeIntResolver } from 'graphql-scalars';
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
    clientMutationId: 'omit',
    cursorType: 'String',
    // The contract's PageInfo has no `node`/`nodes` root fields; ids are upstream ids, not global ids.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    // Other Relay subgraphs define PageInfo too; composition needs it shareable.
    pageInfoTypeOptions: { shareable: true },
  },
});

builder.addScalarType('DateTime', DateTimeResolver, {
  description: 'ISO-8601 date-time in UTC with milliseconds, e.g. 2026-11-21T10:15:30.123Z.',
});
builder.addScalarType('SafeInt', SafeIntResolver, {
  description:
    'Integer in the range of a JavaScript safe integer (|n| <= 2^53-1). Used for byte counts and ids that outgrow a 32-bit Int.',
});
builder.addScalarType('JSON', JSONResolver, { description: 'Any JSON value.' });

builder.queryType({});
