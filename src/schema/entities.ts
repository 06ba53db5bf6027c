/**
 * Guards the federation `_entities` field of @apollo/subgraph. Its resolver loads the
 * representations inside one `map()` and throws on the first unknown `__typename`, which fails the
 * whole list and leaves the loads already started without anyone awaiting them. Here every
 * representation is checked before any of them is loaded, and a bad one becomes an error at its
 * own index (`BAD_USER_INPUT`) while the others resolve; so is every representation of a request
 * beyond the first MAX_REPRESENTATIONS, whichever `_entities` field (or alias) it came in.
 */
import { isUnionType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { BadUserInputError } from '../errors.js';

/** Representations one request may ask for; a router batches far fewer per subgraph fetch. */
export const MAX_REPRESENTATIONS = 100;

type Representation = { readonly __typename: string } & Record<string, unknown>;

function checkRepresentation(value: unknown, index: number, entityTypes: ReadonlySet<string>): Representation | Error {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return new BadUserInputError(`Representation ${index} must be an object with a __typename.`);
  }
  const typename = (value as { __typename?: unknown }).__typename;
  if (typeof typename !== 'string') {
    return new BadUserInputError(`Representation ${index} has no __typename.`);
  }
  if (!entityTypes.has(typename)) {
    return new BadUserInputError(`Representation ${index} names a type this subgraph does not resolve.`);
  }
  return value as Representation;
}

export function guardEntities(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()['_entities'];
  const entityUnion = schema.getType('_Entity');
  if (!field || !isUnionType(entityUnion)) return schema;
  const entityTypes = new Set(entityUnion.getTypes().map((type) => type.name));
  const resolveAll = field.resolve as GraphQLFieldResolver<unknown, unknown, { representations: unknown[] }>;

  // Counted over the whole request, so that aliases of `_entities` do not multiply the bound.
  const sentBefore = new WeakMap<object, number>();
  field.resolve = (source, args: { representations: readonly unknown[] }, context: object, info) => {
    const { representations } = args;
    const before = sentBefore.get(context) ?? 0;
    sentBefore.set(context, before + representations.length);
    const checked = representations.map((value, index) =>
      before + index < MAX_REPRESENTATIONS
        ? checkRepresentation(value, index, entityTypes)
        : new BadUserInputError(`Representation ${index} is beyond the ${MAX_REPRESENTATIONS} a request may ask for.`),
    );
    const valid = checked.filter((item): item is Representation => !(item instanceof Error));
    const resolved = valid.length > 0 ? (resolveAll(source, { representations: valid }, context, info) as unknown[]) : [];
    // graphql-js reports an Error list item at its own path and nulls that item only.
    let next = 0;
    return checked.map((item) => (item instanceof Error ? item : resolved[next++]));
  };
  return schema;
}
