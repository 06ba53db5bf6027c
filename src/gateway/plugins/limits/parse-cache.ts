/**
 * Yoga's parse cache, bounded in bytes. Yoga's own keeps 1024 parsed documents and 1024 parse
 * errors by query text, whatever their size: a comment costs no token, so 1024 documents of
 * 255 KB pass every limit, and a parsed document keeps its whole token list alive (graphql-js links
 * the tokens through the nodes' locations), 2 MB at the 4000-token limit. Either fills the heap.
 * Here an entry costs what it was measured to cost (Node 20, graphql 16), and documents that fail
 * validation are not kept at all: Yoga keeps their validation errors as long as the document, and
 * those errors hold the validator's state through their stacks (2.5 MB for the 100 errors of a
 * 4000-token document).
 */
import type { DocumentNode, Token } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { operationLimits } from './operation-limits.js';

const MB = 2 ** 20;

/** At most 16 MB for both: a few hundred typical operations, or several documents at the limits. */
export const parseCacheBytes = { documents: 12 * MB, errors: 4 * MB } as const;

/** V8 keeps a string in one byte per character, or in two when one of them needs it. */
const BYTES_PER_CHARACTER = 2;
/** Measured: up to 513 bytes of heap per token (a field name per token), 240 to 420 for most. */
const BYTES_PER_PARSED_TOKEN = 600;
/** A parse error keeps the tokens read before it (its stack holds the parser): measured 125 each. */
const BYTES_PER_TOKEN_BEFORE_ERROR = 200;
/** The document or error object, the cache's entry, Yoga's validation result. */
const BYTES_PER_ENTRY = 4096;

/** Tokens of a parsed document, SOF and EOF included: all of them stay reachable from `loc`. */
export function tokenCount(document: DocumentNode): number {
  let count = 0;
  for (let token: Token | null | undefined = document.loc?.startToken; token; token = token.next) count++;
  return count;
}

/** What keeping a parsed document costs: its text and its tokens with the nodes over them. */
export function parsedDocumentBytes(text: string, document: DocumentNode): number {
  return BYTES_PER_CHARACTER * text.length + BYTES_PER_PARSED_TOKEN * tokenCount(document) + BYTES_PER_ENTRY;
}

/** What keeping a parse error costs: its text and, at worst, every token before the end. */
export function parseErrorBytes(text: string): number {
  const tokensRead = Math.min(text.length, operationLimits.maxTokens + 1);
  return BYTES_PER_CHARACTER * text.length + BYTES_PER_TOKEN_BEFORE_ERROR * tokensRead + BYTES_PER_ENTRY;
}

export interface ParseCache {
  /** Parsed documents by query text, for Yoga's `parserAndValidationCache.documentCache`. */
  readonly documents: LRUCache<string, DocumentNode>;
  /** Parse errors by query text, for Yoga's `parserAndValidationCache.errorCache`. */
  readonly errors: LRUCache<string, object>;
  /** Drops a document from `documents` once it fails validation. */
  readonly forgetInvalidDocuments: Plugin;
}

export function createParseCache(bytes: { documents: number; errors: number } = parseCacheBytes): ParseCache {
  const documents = new LRUCache<string, DocumentNode>({
    maxSize: bytes.documents,
    sizeCalculation: (document, text) => parsedDocumentBytes(text, document),
  });
  const errors = new LRUCache<string, object>({ maxSize: bytes.errors, sizeCalculation: (_, text) => parseErrorBytes(text) });
  const forgetInvalidDocuments: Plugin = {
    onValidate: ({ params: { documentAST } }) => {
      return ({ valid }) => {
        // Stryker disable next-line OptionalChaining: Yoga parses with locations
        const text = documentAST.loc?.source.body;
        // Stryker disable next-line ConditionalExpression: deleting undefined deletes nothing
        if (!valid && text !== undefined) documents.delete(text);
      };
    },
  };
  return { documents, errors, forgetInvalidDocuments };
}
