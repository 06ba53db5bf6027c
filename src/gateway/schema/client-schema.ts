/**
 * The schema as clients see it: the gateway's schema without the federation internals a router
 * uses (`_entities`, `_service`, `_Any`, `_Entity`, `_Service`), with the `@defer` and `@stream`
 * directives the gateway executes (so client tooling validates documents that use them).
 * Codegen writes it to schema/schema.graphql; schema/subgraph.graphql keeps the internals for routers.
 */
import {
  DirectiveLocation,
  GraphQLBoolean,
  GraphQLDirective,
  GraphQLInt,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  lexicographicSortSchema,
} from 'graphql';

const FEDERATION_ROOT_FIELDS = new Set(['_entities', '_service']);
const FEDERATION_TYPES = new Set(['_Any', '_Entity', '_Service']);

const ifArgument = (what: string) => ({
  type: new GraphQLNonNull(GraphQLBoolean),
  defaultValue: true,
  description: `${what} only when true (the default).`,
});
const labelArgument = {
  type: GraphQLString,
  description: 'Names this part of the response in its incremental payloads; unique within the operation.',
};

/** Same names, locations and arguments as the executor's (@graphql-tools/utils). */
export const deferDirective = new GraphQLDirective({
  name: 'defer',
  description: 'Delivers this fragment in a later part of an incremental (multipart/mixed or SSE) response.',
  locations: [DirectiveLocation.FRAGMENT_SPREAD, DirectiveLocation.INLINE_FRAGMENT],
  args: { if: ifArgument('Deferred'), label: labelArgument },
});

export const streamDirective = new GraphQLDirective({
  name: 'stream',
  description: 'Delivers the items of this list field in later parts of an incremental response, as they are ready.',
  locations: [DirectiveLocation.FIELD],
  args: {
    if: ifArgument('Streamed'),
    label: labelArgument,
    initialCount: { type: GraphQLInt, defaultValue: 0, description: 'Items sent in the first part, before streaming starts.' },
  },
});

export function clientSchemaOf(schema: GraphQLSchema): GraphQLSchema {
  const config = schema.toConfig();
  const query = schema.getQueryType();
  if (!query) throw new Error('The schema has no Query type.');
  const queryConfig = query.toConfig();
  const clientQuery = new GraphQLObjectType({
    ...queryConfig,
    fields: Object.fromEntries(Object.entries(queryConfig.fields).filter(([name]) => !FEDERATION_ROOT_FIELDS.has(name))),
  });
  const types = config.types
    .filter((type) => !FEDERATION_TYPES.has(type.name))
    .map((type) => (type === query ? clientQuery : type));
  const known = new Set(config.directives.map((directive) => directive.name));
  return lexicographicSortSchema(
    new GraphQLSchema({
      ...config,
      query: clientQuery,
      types,
      directives: [...config.directives, ...[deferDirective, streamDirective].filter((d) => !known.has(d.name))],
      extensions: {},
    }),
  );
}
