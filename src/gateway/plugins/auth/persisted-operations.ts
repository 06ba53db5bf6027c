/** Persisted operations read at start from a JSON file `{ "<id>": "<document>" }`, as codegen and Apollo manifests reduce to. */
import { readFileSync } from 'node:fs';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { Plugin } from 'graphql-yoga';
import { z } from 'zod';
import { ConfigError } from '../../../lib/config.js';

const manifestSchema = z.record(z.string().min(1), z.string().min(1));

function readManifest(file: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError([`PERSISTED_OPERATIONS_FILE: cannot be read as JSON (${(error as Error).message})`]);
  }
  const manifest = manifestSchema.safeParse(parsed);
  if (manifest.success) return new Map(Object.entries(manifest.data));
  throw new ConfigError(['PERSISTED_OPERATIONS_FILE: must be a JSON object mapping operation ids to documents']);
}

export function usePersistedOperationsFile(options: { file: string; only: boolean }): Plugin {
  const operations = readManifest(options.file);
  return usePersistedOperations({
    getPersistedOperation: (id) => operations.get(id) ?? null,
    allowArbitraryOperations: !options.only,
    // Apollo clients recognise these codes (and fall back to sending the document where allowed).
    customErrors: {
      notFound: { message: 'Unknown persisted operation.', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
      persistedQueryOnly: {
        message: 'Only persisted operations are allowed on this gateway.',
        extensions: { code: 'PERSISTED_QUERY_ONLY', http: { status: 400 } },
      },
      keyNotFound: { message: 'No persisted operation id in the request.', extensions: { code: 'BAD_REQUEST' } },
    },
    extractPersistedOperationId: (params) => {
      const extensions = params.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined;
      const hash = extensions?.persistedQuery?.sha256Hash;
      if (typeof hash === 'string') return hash;
      const documentId = (params as { documentId?: unknown }).documentId;
      return typeof documentId === 'string' ? documentId : null;
    },
  }) as Plugin;
}
