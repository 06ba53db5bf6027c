/** Per-request dataloaders: an upstream call happens once per request, within its budget and deadline. */
import DataLoader from 'dataloader';
import pLimit from 'p-limit';
import { BadUserInputError, UpstreamError, type UpstreamService } from '../lib/errors.js';
import { errorForAbort } from '../upstream/error-mapping.js';
import type { AuditReportPage, AuditReportQuery, CallOptions, UpdateSessionFileRow, Upstreams } from '../upstream/types.js';

/** In flight at once (a `last:` search issues 4 per round): one request cannot take every connection of an origin. */
export const REQUEST_CONCURRENCY = 8;
/** In all: the largest legitimate request (30 `last:` pages over distinct filters, or 100 representations) stays below. */
export const MAX_UPSTREAM_CALLS_PER_REQUEST = 1000;

const notConfigured = (service: UpstreamService) =>
  new UpstreamError('UPSTREAM_NOT_CONFIGURED', service, `The ${service} upstream is not configured on this gateway.`);

const overBudget = () =>
  new BadUserInputError(
    `This request needs more than ${MAX_UPSTREAM_CALLS_PER_REQUEST} upstream calls; ask for less in one request.`,
  );

/** Every field of the query, an absent filter apart from any text. */
const auditQueryKey = (q: AuditReportQuery) =>
  JSON.stringify([q.fromMillis, q.toMillis, q.objectType, q.action, q.pageSize, q.startIndex]);

const toError = (reason: unknown) => (reason instanceof Error ? reason : new Error(String(reason)));

export function createLoaders(upstreams: Upstreams, call: CallOptions) {
  const limit = pLimit(REQUEST_CONCURRENCY);
  let started = 0;
  /** One call per key within this request's budget, each settled on its own: one failure never fails the batch. */
  const batchOf =
    <K, V, S>(service: UpstreamService, route: string, client: S | undefined, run: (client: S, key: K) => Promise<V>) =>
    async (keys: readonly K[]) => {
      if (!client) return keys.map(() => notConfigured(service));
      const calls = keys.map((key) => {
        if (started >= MAX_UPSTREAM_CALLS_PER_REQUEST) return Promise.reject(overBudget());
        started++;
        return limit(() => {
          const signal = call.signal;
          return signal?.aborted ? Promise.reject(errorForAbort(service, signal, route)) : run(client, key);
        });
      });
      const results = await Promise.allSettled(calls);
      return results.map((r) => (r.status === 'fulfilled' ? r.value : toError(r.reason)));
    };
  // Each made on first use: most requests need one of them, some neither.
  let auditReport: DataLoader<AuditReportQuery, AuditReportPage, string> | undefined;
  let updateSessionFiles: DataLoader<string, readonly UpdateSessionFileRow[]> | undefined;
  return {
    get auditReport() {
      return (auditReport ??= new DataLoader(
        batchOf('identity', 'audit-report', upstreams.identity, (identity, q: AuditReportQuery) =>
          identity.auditReport(q, call),
        ),
        { cacheKeyFn: auditQueryKey },
      ));
    },
    get updateSessionFiles() {
      return (updateSessionFiles ??= new DataLoader(
        batchOf('content-library', 'update-session-files', upstreams.contentLibrary, (library, id: string) =>
          library.listUpdateSessionFiles(id, call),
        ),
      ));
    },
    upstreamCalls: () => started,
  };
}
