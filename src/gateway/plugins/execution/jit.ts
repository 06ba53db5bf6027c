/**
 * graphql-jit for audit pages: compiling the operation pays off on 5000-row pages, where field
 * execution dominates. Other operations keep graphql-js: graphql-jit drops the items of a list
 * whose resolver rejects (seen with `_entities`), where graphql-js keeps them as null; and it
 * ignores @defer/@stream. Compiled queries are kept in a cache bounded in bytes
 * (src/gateway/plugins/execution/compiled-queries.ts): an operation runs on graphql-js the first time it is sent.
 */
import { BREAK, getOperationAST, getVariableValues, Kind, visit, type DocumentNode, type ExecutionArgs, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../../../lib/logger.js';
import { createCompiledQueries, MAX_COMPILED_FIELDS, type Compilation, type CompiledQueries } from './compiled-queries.js';

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

/** The operation to run, when graphql-jit may run it. */
function auditPagesOperation({ document, operationName }: ExecutionArgs): OperationDefinitionNode | undefined {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== 'query') return undefined;
  let usesIncremental = incremental.get(document);
  if (usesIncremental === undefined) incremental.set(document, (usesIncremental = usesIncrementalDelivery(document)));
  const onlyAuditPages =
    !usesIncremental &&
    operation.selectionSet.selections.every(
      (selection) => selection.kind === Kind.FIELD && COMPILED_ROOT_FIELDS.has(selection.name.value),
    );
  return onlyAuditPages ? operation : undefined;
}

function compilationMessage({ kept, fields }: Compilation): string {
  if (kept) return 'graphql-jit compiled the operation';
  if (fields > MAX_COMPILED_FIELDS) return 'operation has too many fields to compile: graphql-js runs it';
  return 'graphql-jit compiled the operation, too costly to keep: graphql-js runs it';
}

function logCompilation(compilation: Compilation, { contextValue }: ExecutionArgs): void {
  (contextValue as { log?: Logger }).log?.debug({ jit: compilation }, compilationMessage(compilation));
}

/**
 * Whether graphql-js refuses the operation's variables. graphql-jit coerces them its own way: it
 * accepts some values graphql-js refuses (a list for an input object), and its refusals differ
 * (another message, naming a field of an input object as if it were the variable; no locations;
 * the scalar's error as their cause, which the log takes for unexpected). The default executor
 * refuses them instead: the same answer and log as when nothing is compiled, for a few microseconds.
 */
function variablesRefused({ schema, variableValues }: ExecutionArgs, operation: OperationDefinitionNode): boolean {
  const definitions = operation.variableDefinitions;
  if (!definitions?.length) return false;
  return getVariableValues(schema, definitions, variableValues ?? {}, { maxErrors: 1 }).errors !== undefined;
}

export function useJitForAuditPages(compiledQueries: CompiledQueries = createCompiledQueries(undefined, logCompilation)): Plugin {
  return {
    onExecute({ args, setExecuteFn }) {
      const operation = auditPagesOperation(args);
      const execute = operation && compiledQueries.executeFor(args, operation);
      if (execute && !variablesRefused(args, operation)) setExecuteFn(execute);
    },
  };
}
