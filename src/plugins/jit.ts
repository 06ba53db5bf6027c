/**
 * graphql-jit for audit pages: compiling the operation pays off on 5000-row pages, where field
 * execution dominates. Other operations keep graphql-js: graphql-jit drops the items of a list
 * whose resolver rejects (seen with `_entities`), where graphql-js keeps them as null.
 */
import { useGraphQlJit } from '@envelop/graphql-jit';
import { getOperationAST, Kind, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const COMPILED_ROOT_FIELDS = new Set(['auditEvents', '__typename']);

function onlyAuditPages({ document, operationName }: ExecutionArgs): boolean {
  const operation = getOperationAST(document, operationName);
  return (
    operation?.operation === 'query' &&
    operation.selectionSet.selections.every(
      (selection) => selection.kind === Kind.FIELD && COMPILED_ROOT_FIELDS.has(selection.name.value),
    )
  );
}

export function useJitForAuditPages(): Plugin {
  return useGraphQlJit({}, { enableIf: onlyAuditPages }) as Plugin;
}
