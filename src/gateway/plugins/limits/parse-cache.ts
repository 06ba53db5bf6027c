/** Yoga's parse cache bounded in bytes (its own keeps 1024 of any size); invalid documents go: their errors hold the validator. */
import type { DocumentNode, Token } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { operationLimits } from './operation-limits.js';

const MB = 2 ** 20;

/** V8 keeps a string in one byte per character, or in two when one of them needs it. */
const BYTES_PER_CHARACTER = 2;
/** Heap per token of a parsed document, the worst measured with a margin. */
const BYTES_PER_PARSED_TOKEN = 600;
/** A parse error keeps the tokens read before it (its stack holds the parser). */
const BYTES_PER_TOKEN_BEFORE_ERROR = 200;
/** The document or error object, the cache's entry, Yoga's validation result. */
const BYTES_PER_ENTRY = 4096;

/** Tokens of a parsed document, SOF and EOF included: all of them stay reachable from `loc`. */
export function tokenCount(document: DocumentNode): number {
  let count = 0;
  for (let token: Token | null | undefined = document.loc?.startToken; token; token = token.next) count++;
  return count;
}

export function parsedDocumentBytes(text: string, document: DocumentNode): number {
  return BYTES_PER_CHARACTER * text.length + BYTES_PER_PARSED_TOKEN * tokenCount(document) + BYTES_PER_ENTRY;
}

export function parseErrorBytes(text: string): number {
  const tokensRead = Math.min(text.length, operationLimits.maxTokens + 1);
  return BYTES_PER_CHARACTER * text.length + BYTES_PER_TOKEN_BEFORE_ERROR * tokensRead + BYTES_PER_ENTRY;
}

export function createParseCache(bytes = { documents: 12 * MB, errors: 4 * MB }) {
  const documents = new LRUCache<string, DocumentNode>({
    maxSize: bytes.documents,
    sizeCalculation: (document, text) => parsedDocumentBytes(text, document),
  });
  const errors = new LRUCache<string, object>({ maxSize: bytes.errors, sizeCalculation: (_, text) => parseErrorBytes(text) });
  const forgetInvalidDocuments: Plugin = {
    onValidate: ({ params: { documentAST } }) => ({ valid }) => {
      if (!valid) documents.delete(documentAST.loc!.source.body);
    },
  };
  return { documents, errors, forgetInvalidDocuments };
}
