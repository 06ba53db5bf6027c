/** How many fields graphql-jit writes code for: each once per object type it may be resolved on, fragments expanded. */
import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  Kind,
  type DocumentNode,
  type GraphQLCompositeType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { fragmentsOf } from '../limits/document-analysis.js';

/** The count, or `limit + 1` as soon as it passes `limit`. */
export function compiledFieldCount(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  limit: number,
): number {
  const fragments = fragmentsOf(document);
  let count = 0;

  const applies = (condition: string | undefined, type: GraphQLObjectType) => {
    if (condition === undefined || condition === type.name) return true;
    const conditionType = schema.getType(condition);
    return conditionType !== undefined && isAbstractType(conditionType) && schema.isSubType(conditionType, type);
  };

  const countOn = (selectionSet: SelectionSetNode, type: GraphQLObjectType): void => {
    for (const selection of selectionSet.selections) {
      if (count > limit) return;
      if (selection.kind === Kind.FIELD) {
        count++;
        const fieldType = type.getFields()[selection.name.value]?.type;
        const named = fieldType && getNamedType(fieldType);
        if (selection.selectionSet && named && isCompositeType(named)) countIn(selection.selectionSet, named);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (applies(selection.typeCondition?.name.value, type)) countOn(selection.selectionSet, type);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (fragment && applies(fragment.typeCondition.name.value, type)) countOn(fragment.selectionSet, type);
      }
    }
  };

  const countIn = (selectionSet: SelectionSetNode, type: GraphQLCompositeType): void => {
    for (const possible of isAbstractType(type) ? schema.getPossibleTypes(type) : [type]) countOn(selectionSet, possible);
  };

  const root = schema.getRootType(operation.operation);
  if (root) countOn(operation.selectionSet, root);
  return Math.min(count, limit + 1);
}
