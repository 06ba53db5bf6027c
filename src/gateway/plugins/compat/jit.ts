/**
 * graphql-jit for audit pages, compiled the second time their document is sent and kept by operation in a cache bounded
 * in bytes: @envelop/graphql-jit 11.2.1 keys them by document alone (its second operation runs the first one's) for as
 * long as the document lives. Others keep graphql-js: graphql-jit drops a list's items on a rejection, knows no @defer/@stream.
 */
import { Kind, type DocumentNode, type ExecutionArgs, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery, type CompilerOptions } from 'graphql-jit';
import { makeExecute, type Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../../lib/logger.js';
import { compiledFieldCount } from './compiled-field-count.js';
import { analysisOf, coercedVariables } from '../limits/document-analysis.js';
import { parsedDocumentBytes } from '../limits/parse-cache.js';

/** Heap per character of generated code once it has run hot, per compiled query, per key. */
const BYTES_PER_CODE_CHARACTER = 8;
const BYTES_PER_COMPILED_QUERY = 16 * 1024;
const keyBytes = (key: string) => 2 * key.length + 256;

/** More fields than this run on graphql-js: the code, and the time compiling it blocks, grow with them. */
export const MAX_COMPILED_FIELDS = 600;

/** graphql-jit 0.8.7 keeps some of every compilation in a memo that never forgets (0.8.9 is much slower): a cap. */
const MAX_COMPILATIONS = 256;

type Execute = ReturnType<typeof makeExecute>;

type Known = { readonly execute: Execute | undefined; readonly bytes: number };

export interface Compilation {
  readonly operation: string;
  readonly fields: number;
  readonly codeCharacters: number | undefined;
  readonly bytes: number | undefined;
  readonly kept: boolean;
  readonly ms: number;
}

/** graphql-jit shows the code it generated only in debug mode; read its length and let it go. */
type DebugCompiledQuery = CompiledQuery & { __DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation?: string };

/**
 * graphql-jit 0.8.7 collects a selection set's own fields first, then its fragments last to first (from a
 * stack), so `... on AuditRecord { uuid } ... on LoginEvent { success }` answers `success` first. With every
 * selection in a fragment of its own, in reverse order, the stack gives them back in the document's order.
 */
function inDocumentOrder(document: DocumentNode): DocumentNode {
  const stacked = (set: SelectionSetNode): SelectionSetNode => ({
    ...set,
    selections: set.selections
      .map((selection) => {
        if (selection.kind === Kind.FRAGMENT_SPREAD) return selection;
        const inner = selection.selectionSet ? { ...selection, selectionSet: stacked(selection.selectionSet) } : selection;
        if (inner.kind === Kind.INLINE_FRAGMENT) return inner;
        return { kind: Kind.INLINE_FRAGMENT, selectionSet: { kind: Kind.SELECTION_SET, selections: [inner] } } as const;
      })
      .reverse(),
  });
  const definitions = document.definitions.map((definition) =>
    'selectionSet' in definition ? { ...definition, selectionSet: stacked(definition.selectionSet) } : definition,
  );
  return { ...document, definitions };
}

function compile(schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined) {
  const compiled = compileQuery(schema, inDocumentOrder(document), operationName, { debug: true } as Partial<CompilerOptions>);
  if (!isCompiledQuery(compiled)) return undefined;
  const code = (compiled as DebugCompiledQuery).__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation;
  delete (compiled as DebugCompiledQuery).__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation;
  return typeof code === 'string' ? { query: compiled.query, codeCharacters: code.length } : undefined;
}

export function createCompiledQueries(
  maxBytes = 16 * 2 ** 20,
  onCompiled: (compilation: Compilation, args: ExecutionArgs) => void = () => {},
  maxCompilations = MAX_COMPILATIONS,
) {
  let compilations = 0;
  const cache = new LRUCache<string, Known>({ maxSize: maxBytes, sizeCalculation: (known) => known.bytes });
  const sentBefore = new WeakSet<DocumentNode>();

  function compileAndKeep(args: ExecutionArgs, operation: OperationDefinitionNode, text: string, key: string): Known {
    const started = performance.now();
    const name = operation.name?.value;
    const fields = compiledFieldCount(args.schema, args.document, operation, MAX_COMPILED_FIELDS);
    const compilable = fields <= MAX_COMPILED_FIELDS;
    if (compilable) compilations++;
    const compiled = compilable ? compile(args.schema, args.document, name) : undefined;
    const bytes = compiled && BYTES_PER_CODE_CHARACTER * compiled.codeCharacters + parsedDocumentBytes(text, args.document) + keyBytes(key) + BYTES_PER_COMPILED_QUERY;
    const kept = bytes !== undefined && bytes <= maxBytes / 4;
    // Left to graphql-js, the operation still has an entry, so that it is not compiled again.
    const known: Known = kept
      ? { execute: makeExecute((run) => compiled!.query(run.rootValue, run.contextValue, run.variableValues)), bytes }
      : { execute: undefined, bytes: keyBytes(key) };
    cache.set(key, known);
    const ms = Math.round(performance.now() - started);
    onCompiled({ operation: name ?? '(anonymous)', fields, codeCharacters: compiled?.codeCharacters, bytes, kept, ms }, args);
    return known;
  }

  return {
    cache,
    /** Undefined: graphql-js runs it this time. */
    executeFor(args: ExecutionArgs, operation: OperationDefinitionNode): Execute | undefined {
      const text = args.document.loc!.source.body;
      const key = `${operation.name?.value ?? ''}\n${text}`;
      const known = cache.get(key);
      if (known) return known.execute;
      if (sentBefore.has(args.document) && compilations < maxCompilations) return compileAndKeep(args, operation, text, key).execute;
      sentBefore.add(args.document);
      return undefined;
    },
  };
}

function logCompilation(compilation: Compilation, { contextValue }: ExecutionArgs): void {
  const message = compilation.kept
    ? 'graphql-jit compiled the operation'
    : compilation.fields > MAX_COMPILED_FIELDS
      ? 'operation has too many fields to compile: graphql-js runs it'
      : 'graphql-jit compiled the operation, too costly to keep: graphql-js runs it';
  (contextValue as { log?: Logger }).log?.debug({ jit: compilation }, message);
}

export function useJitForAuditPages(compiledQueries: ReturnType<typeof createCompiledQueries> = createCompiledQueries(undefined, logCompilation)): Plugin {
  return {
    onExecute({ args, setExecuteFn }) {
      const analysis = analysisOf(args.document, args.operationName);
      if (!analysis?.onlyAuditPages) return;
      const execute = compiledQueries.executeFor(args, analysis.operation);
      // graphql-jit coerces variables its own way, accepting some graphql-js refuses: those are left to graphql-js.
      if (execute && (!analysis.operation.variableDefinitions?.length || coercedVariables(args, analysis))) setExecuteFn(execute);
    },
  };
}
