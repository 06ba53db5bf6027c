/**
 * graphql-jit for audit pages: compiling the operation pays off on 5000-row pages, where field
 * execution dominates. Other operations keep graphql-js: graphql-jit drops the items of a list
 * whose resolver rejects (seen with `_entities`), where graphql-js keeps them as null; and it
 * ignores @defer/@stream.
 */
import { useGraphQlJit } from '@envelop/graphql-jit';
import { BREAK, getOperationAST, Kind, visit, type DocumentNode, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const COMPILED_ROOT_FIELDS = new Set(['auditEvents', '__typename']);

/** graphql-jit knows no incremental delivery: such operations stay with the default executor. */
function usesIncrementalDelivery(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value === 'defer' || node.name.value === 'stream') {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/** Yoga hands out one parsed document per query text: the walk is done once per document. */
const incremental = new WeakMap<DocumentNode, boolean>();

function onlyAuditPages({ document, operationName }: ExecutionArgs): boolean {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== 'query') return false;
  let usesIncremental = incremental.get(document);
  if (usesIncremental === undefined) incremental.set(document, (usesIncremental = usesIncrementalDelivery(document)));
  return (
    !usesIncremental &&
    operation.selectionSet.selections.every(
      (selection) => selection.kind === Kind.FIELD && COMPILED_ROOT_FIELDS.has(selection.name.value),
    )
  );
}

export function useJitForAuditPages(): Plugin {
  return useGraphQlJit({}, { enableIf: onlyAuditPages }) as Plugin;
}
