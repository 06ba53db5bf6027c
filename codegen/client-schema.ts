/**
 * The schema as clients see it (codegen writes it to schema/schema.graphql): without the federation internals,
 * with the `@defer` and `@stream` directives the gateway executes, so client tooling validates documents using them.
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
const deferDirective = new GraphQLDirective({
  name: 'defer',
  description: 'Delivers this fragment in a later part of an incremental (multipart/mixed or SSE) response.',
  locations: [DirectiveLocation.FRAGMENT_SPREAD, DirectiveLocation.INLINE_FRAGMENT],
  args: { if: ifArgument('Deferred'), label: labelArgument },
});

const streamDirective = new GraphQLDirective({
  name: 'stream',
  description: 'Delivers the items of this list field in later parts of an incremental response, as they are ready.',
  locations: [DirectiveLocation.FIELD],
  args: {
    if: ifArgument('Streamed'),
    label: labelArgument,
    initialCount: { type: GraphQLInt, defaultValue: 0, description: 'Items sent in the first part, before streaming starts.' },
  },
});

/** Federation's names all start with one underscore; GraphQL's own (`__`) are not in the config. */
const isClientName = (name: string) => !name.startsWith('_');

export function clientSchemaOf(schema: GraphQLSchema): GraphQLSchema {
  const config = schema.toConfig();
  const queryConfig = schema.getQueryType()!.toConfig();
  const query = new GraphQLObjectType({
    ...queryConfig,
    fields: Object.fromEntries(Object.entries(queryConfig.fields).filter(([name]) => isClientName(name))),
  });
  const types = config.types.filter((type) => isClientName(type.name) && type.name !== query.name);
  return lexicographicSortSchema(
    new GraphQLSchema({ ...config, query, types, directives: [...config.directives, deferDirective, streamDirective], extensions: {} }),
  );
}
