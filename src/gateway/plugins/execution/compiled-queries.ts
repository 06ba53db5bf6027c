/**
 * graphql-jit's compiled queries, kept by operation in a cache bounded in bytes (@envelop/graphql-jit
 * keeps one per parsed document for as long as the document lives, whatever the operation name
 * asked for). A compiled query is large, up to 6 bytes of heap per character of its generated
 * code once it has run hot (0.75 MB for an audit page with every field, 4.7 MB for seven such aliases),
 * and slow to make (20 ms for a full audit page, close to a second for thirty): an operation is
 * compiled the second time its document is sent, unless it has more fields than MAX_COMPILED_FIELDS,
 * and one that would take more than a quarter of the cache is left to graphql-js.
 */
import type { DocumentNode, ExecutionArgs, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery, type CompilerOptions } from 'graphql-jit';
import { makeExecute } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { compiledFieldCount } from './compiled-field-count.js';
import { parsedDocumentBytes } from '../limits/parse-cache.js';

export const COMPILED_QUERIES_BYTES = 16 * 2 ** 20;

/** Measured: 4.6 to 6.1 bytes of heap per character of generated code after 300 runs over rows. */
const BYTES_PER_CODE_CHARACTER = 8;
/** The compiled query's own objects and the cache's entry (`{ a: __typename }`, run: 17 KB in all). */
const BYTES_PER_COMPILED_QUERY = 16 * 1024;
/** A key (operation name and query text) in two bytes per character, and its entry. */
const keyBytes = (key: string) => 2 * key.length + 256;

export type Execute = ReturnType<typeof makeExecute>;

/** What the cache knows of an operation: how to run it compiled, or nothing (graphql-js runs it). */
interface Known {
  readonly execute: Execute | undefined;
  readonly bytes: number;
}

/**
 * Operations with more fields than this (counted as graphql-jit writes code for them: about 1300
 * characters each) run on graphql-js. A full audit page with every field has 151; four of them would
 * take about a quarter of the cache, and compiling thirty blocks the event loop for most of a second.
 */
export const MAX_COMPILED_FIELDS = 600;

/** What compiling cost, for the log. */
export interface Compilation {
  readonly operation: string;
  /** Fields counted as compiledFieldCount counts them, up to MAX_COMPILED_FIELDS + 1. */
  readonly fields: number;
  /** Undefined when graphql-jit could not compile it, or was not asked to. */
  readonly codeCharacters: number | undefined;
  /** What keeping it costs (or would have cost). */
  readonly bytes: number | undefined;
  readonly kept: boolean;
  readonly ms: number;
}

/** graphql-jit shows the code it generated only in debug mode; read its length and let it go. */
type DebugCompiledQuery = CompiledQuery & { __DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation?: string };

function compile(schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined) {
  const compiled = compileQuery(schema, document, operationName, { debug: true } as Partial<CompilerOptions>);
  if (!isCompiledQuery(compiled)) return undefined;
  const code = (compiled as DebugCompiledQuery).__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation;
  delete (compiled as DebugCompiledQuery).__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation;
  // Of unknown cost (a graphql-jit without debug mode), it is not kept.
  return typeof code === 'string' ? { query: compiled.query, codeCharacters: code.length } : undefined;
}

/** What keeping a compiled query costs: its code, its document (which it holds) and its key. */
export function compiledQueryBytes(codeCharacters: number, text: string, document: DocumentNode, key: string): number {
  return BYTES_PER_CODE_CHARACTER * codeCharacters + parsedDocumentBytes(text, document) + keyBytes(key) + BYTES_PER_COMPILED_QUERY;
}

export interface CompiledQueries {
  /** How to run this operation compiled, or undefined: graphql-js runs it this time. */
  executeFor(args: ExecutionArgs, operation: OperationDefinitionNode): Execute | undefined;
  readonly cache: LRUCache<string, Known>;
}

/**
 * graphql-jit 0.8.7 keeps some of every compilation in a module-wide memo that never forgets (0.8.9
 * forgets, but calls every resolver through three closures: 56 % more CPU per 5000-row page). So
 * compilations are counted; past this many, every new operation runs on graphql-js.
 */
export const MAX_COMPILATIONS = 256;

export function createCompiledQueries(
  maxBytes = COMPILED_QUERIES_BYTES,
  onCompiled: (compilation: Compilation, args: ExecutionArgs) => void = () => {},
  maxCompilations = MAX_COMPILATIONS,
): CompiledQueries {
  let compilations = 0;
  const cache = new LRUCache<string, Known>({ maxSize: maxBytes, sizeCalculation: (known) => known.bytes });
  /** Documents whose operations ran once already, for as long as Yoga's parse cache keeps them. */
  const sentBefore = new WeakSet<DocumentNode>();

  function compileAndKeep(args: ExecutionArgs, operation: OperationDefinitionNode, text: string, key: string): Known {
    const started = performance.now();
    const name = operation.name?.value;
    const fields = compiledFieldCount(args.schema, args.document, operation, MAX_COMPILED_FIELDS);
    const compilable = fields <= MAX_COMPILED_FIELDS;
    if (compilable) compilations++;
    const compiled = compilable ? compile(args.schema, args.document, name) : undefined;
    const bytes = compiled && compiledQueryBytes(compiled.codeCharacters, text, args.document, key);
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
    executeFor(args, operation) {
      const text = args.document.loc?.source.body;
      if (text === undefined) return undefined;
      const name = operation.name?.value;
      // Operation names are GraphQL names: the first line break ends the name.
      const key = `${name ?? ''}\n${text}`;
      const known = cache.get(key);
      if (known) return known.execute;
      if (sentBefore.has(args.document) && compilations < maxCompilations) {
        return compileAndKeep(args, operation, text, key).execute;
      }
      sentBefore.add(args.document);
      return undefined;
    },
  };
}
