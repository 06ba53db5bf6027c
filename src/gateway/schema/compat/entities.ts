/** `_entities` one by one: an unknown `__typename` fails its own index, not the list; representations are bounded. */
import { isUnionType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { BadUserInputError } from '../../../lib/errors.js';

/** Representations one request may ask for; a router batches far fewer per subgraph fetch. */
export const MAX_REPRESENTATIONS = 100;

function checkRepresentation(value: unknown, index: number, entityTypes: ReadonlySet<string>): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return new BadUserInputError(`Representation ${index} must be an object with a __typename.`);
  }
  const typename: unknown = (value as { __typename?: unknown }).__typename;
  if (typeof typename !== 'string') return new BadUserInputError(`Representation ${index} has no __typename.`);
  if (!entityTypes.has(typename)) {
    return new BadUserInputError(`Representation ${index} names a type this subgraph does not resolve.`);
  }
  return value;
}

export function guardEntities(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()['_entities'];
  const entityUnion = schema.getType('_Entity');
  if (!field || !isUnionType(entityUnion)) return schema;
  const entityTypes = new Set(entityUnion.getTypes().map((type) => type.name));
  const resolveAll = field.resolve as GraphQLFieldResolver<unknown, unknown, { representations: unknown[] }>;

  // Counted over the whole request, so that aliases of `_entities` do not multiply the bound.
  const sentBy = new WeakMap<object, number>();
  field.resolve = (source, args: { representations: readonly unknown[] }, context: object, info) => {
    const { representations } = args;
    const sent = (sentBy.get(context) ?? 0) + representations.length;
    sentBy.set(context, sent);
    // One error for the field, not one per representation: a request may send tens of thousands.
    if (sent > MAX_REPRESENTATIONS) {
      throw new BadUserInputError(
        `At most ${MAX_REPRESENTATIONS} representations are resolved per request; this one sent ${sent}.`,
      );
    }
    const checked = representations.map((value, index) => checkRepresentation(value, index, entityTypes));
    const valid = checked.filter((item) => !(item instanceof Error));
    const resolved = resolveAll(source, { representations: valid }, context, info) as unknown[];
    // graphql-js reports an Error list item at its own path and nulls that item only.
    let next = 0;
    return checked.map((item) => (item instanceof Error ? item : resolved[next++]));
  };
  return schema;
}
