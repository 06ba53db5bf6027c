/** APQ in an LRU bounded in entries and bytes; Redis the replicas' second tier (a document from it must hash to its key). */
import { useAPQ, type APQStore } from '@graphql-yoga/plugin-apq';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { SharedStore } from '../../../upstream/shared-store/store.js';
import { refusal } from '../compat/coded-refusals.js';
import { digest } from './caller-auth.js';

const DEFAULT_PERSISTED_QUERY_LIMITS = {
  maxEntries: 1000,
  maxChars: 8 * 1024 * 1024,
  /** How long an unused document stays. */
  ttlMs: 24 * 60 * 60_000,
};

/** SHA-256 in lower-case hex, as Apollo clients send it; anything else is never looked up. */
const SHA256_HEX = /^[0-9a-f]{64}$/;

export function createPersistedQueryStore(limits = DEFAULT_PERSISTED_QUERY_LIMITS, shared?: SharedStore): APQStore {
  const documents = new LRUCache<string, string>({
    max: limits.maxEntries,
    maxSize: limits.maxChars,
    sizeCalculation: (document) => Math.max(1, document.length),
    ttl: limits.ttlMs,
    updateAgeOnGet: true,
  });
  const sharedKey = (hash: string) => shared!.key(`apq:${hash}`);
  const fromShared = async (hash: string) => {
    const document = await shared!.get(sharedKey(hash), 'apq');
    if (document === undefined || digest(document).toString('hex') !== hash) return undefined;
    documents.set(hash, document);
    return document;
  };
  return {
    get(hash) {
      if (!SHA256_HEX.test(hash)) return undefined;
      const kept = documents.get(hash);
      return kept !== undefined || !shared ? kept : fromShared(hash);
    },
    set(hash, document) {
      documents.set(hash, document);
      return shared?.set(sharedKey(hash), 'apq', document, limits.ttlMs);
    },
  };
}

/** useAPQ's PERSISTED_QUERY_MISMATCH (a document that does not hash to its hash) is a malformed request. */
function asBadRequest(error: unknown): unknown {
  if (!(error instanceof GraphQLError) || error.extensions.code !== 'PERSISTED_QUERY_MISMATCH') return error;
  return refusal('The persisted query hash (extensions.persistedQuery.sha256Hash) does not match the query.');
}

export function useAutomaticPersistedQueries(store: APQStore = createPersistedQueryStore()): Plugin {
  const apq = useAPQ({ store }) as Plugin;
  const onParams = apq.onParams!;
  return {
    ...apq,
    // useAPQ's hook is async: a request without the extension skips its promise.
    onParams: (payload) =>
      (payload.params.extensions as { persistedQuery?: unknown } | undefined)?.persistedQuery === undefined
        ? undefined
        : Promise.resolve(onParams(payload)).catch((error: unknown) => {
            throw asBadRequest(error);
          }),
  };
}
