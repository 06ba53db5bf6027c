/**
 * Rules graphql 16.15 gets wrong, as graphql 17 has them: `@skip`/`@include` on a subscription's root are an error (16
 * evaluates them without variables, throwing on one), as is an operation type without a root (16 fails it in execution).
 */
import {
  GraphQLError,
  Kind,
  SingleFieldSubscriptionsRule,
  type ASTVisitor,
  type DirectiveNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

const CONDITIONS = new Set(['skip', 'include']);

/** The `@skip`/`@include` directives of a root selection set, fragments spread into it included. */
function rootConditions(context: ValidationContext, selectionSet: SelectionSetNode, seen: Set<string>): DirectiveNode[] {
  const found: DirectiveNode[] = [];
  for (const selection of selectionSet.selections) {
    found.push(...(selection.directives ?? []).filter((directive) => CONDITIONS.has(directive.name.value)));
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      found.push(...rootConditions(context, selection.selectionSet, seen));
    } else if (selection.kind === Kind.FRAGMENT_SPREAD && !seen.has(selection.name.value)) {
      // Each fragment once: a cycle of spreads is NoFragmentCyclesRule's to report.
      seen.add(selection.name.value);
      const fragment = context.getFragment(selection.name.value);
      if (fragment) found.push(...rootConditions(context, fragment.selectionSet, seen));
    }
  }
  return found;
}

/** graphql 17's: an operation type needs a root, and graphql 16's subscription rule runs without root `@skip`/`@include`. */
function operationRule(context: ValidationContext): ASTVisitor {
  const graphql16 = SingleFieldSubscriptionsRule(context) as { OperationDefinition: (node: OperationDefinitionNode) => void };
  return {
    OperationDefinition(node) {
      if (!context.getSchema().getRootType(node.operation)) {
        context.reportError(new GraphQLError(`This schema does not support ${node.operation} operations.`, { nodes: node }));
        return;
      }
      if (node.operation !== 'subscription') return;
      const directives = rootConditions(context, node.selectionSet, new Set());
      if (directives.length === 0) return graphql16.OperationDefinition(node);
      const subject = node.name ? `Subscription "${node.name.value}"` : 'Anonymous Subscription';
      const message = `${subject} must not use \`@skip\` or \`@include\` directives in the top level selection.`;
      context.reportError(new GraphQLError(message, { nodes: directives }));
    },
  };
}

/** graphql 17's rules in place of graphql 16's subscription rule, so that one never runs. */
export function useGraphql17Validation(): Plugin {
  return {
    onValidate({ params, addValidationRule }) {
      const rules = params.rules as ValidationRule[] | undefined;
      const index = rules?.indexOf(SingleFieldSubscriptionsRule) ?? -1;
      if (rules && index >= 0) rules[index] = operationRule;
      else addValidationRule(operationRule);
    },
  };
}
