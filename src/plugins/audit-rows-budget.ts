/**
 * The one expensive thing in this schema is audit rows: each `auditEvents` field reads up to
 * 5000 of them upstream. This caps the rows one operation asks for, reading `first`/`last` from
 * literals and variables alike (a static cost rule sees only literals).
 */
import {
  GraphQLError,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

const DEFAULT_PAGE = 50;

function pageSize(value: ValueNode | undefined, variables: Record<string, unknown>): number {
  if (!value) return 0;
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) {
    const given = variables[value.name.value];
    return typeof given === 'number' ? given : 0;
  }
  return 0;
}

function requestedRows(
  selections: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  seen = new Set<string>(),
): number {
  let rows = 0;
  for (const selection of selections.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value !== 'auditEvents') continue;
      const arg = (name: string) => selection.arguments?.find((a) => a.name.value === name)?.value;
      rows += Math.max(pageSize(arg('first'), variables), pageSize(arg('last'), variables)) || DEFAULT_PAGE;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      rows += requestedRows(selection.selectionSet, fragments, variables, seen);
    } else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments.get(selection.name.value);
      if (fragment) rows += requestedRows(fragment.selectionSet, fragments, variables, seen);
    }
  }
  return rows;
}

export function useAuditRowsBudget(maxRows: number): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const document = args.document as DocumentNode;
      const operations = document.definitions.filter(
        (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
      );
      const operation = args.operationName
        ? operations.find((o) => o.name?.value === args.operationName)
        : operations[0];
      if (!operation || operation.operation !== 'query') return;
      const fragments = new Map(
        document.definitions
          .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
          .map((f) => [f.name.value, f]),
      );
      const rows = requestedRows(operation.selectionSet, fragments, args.variableValues ?? {});
      if (rows > maxRows) {
        setResultAndStopExecution({
          errors: [
            new GraphQLError(
              `The operation asks for ${rows} audit rows; at most ${maxRows} are served per operation. Page through them instead.`,
              { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
            ),
          ],
        });
      }
    },
  };
}
