/**
 * Per-request dataloaders: the same upstream call within one GraphQL request happens once. Each call goes
 * through the request's budget (in flight, in all); one whose turn comes after the deadline is not made.
 */
import DataLoader from 'dataloader';
import pLimit from 'p-limit';
import { BadUserInputError, UpstreamError, type UpstreamService } from '../lib/errors.js';
import { errorForAbort } from '../upstream/error-mapping.js';
import type {
  AuditReportPage,
  AuditReportQuery,
  CallOptions,
  UpdateSessionFileRow,
  Upstreams,
} from '../upstream/types.js';

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

/** Settles every key on its own, so one failing call never fails the others of the batch. */
const settle = <T>(promises: Promise<T>[]) =>
  Promise.allSettled(promises).then((results) =>
    results.map((r) => (r.status === 'fulfilled' ? r.value : toError(r.reason))),
  );
const toError = (reason: unknown) => (reason instanceof Error ? reason : new Error(String(reason)));

export function createLoaders(upstreams: Upstreams, call: CallOptions) {
  const limit = pLimit(REQUEST_CONCURRENCY);
  let started = 0;
  /** Runs one upstream call within this request's budget; never throws synchronously. */
  const budgeted = <T>(service: UpstreamService, route: string, run: () => Promise<T>): Promise<T> => {
    if (started >= MAX_UPSTREAM_CALLS_PER_REQUEST) return Promise.reject(overBudget());
    started++;
    return limit(() => {
      const signal = call.signal;
      return signal?.aborted ? Promise.reject(errorForAbort(service, signal, route)) : run();
    });
  };
  // Each made on first use: most requests need one of them, some neither.
  let auditReport: DataLoader<AuditReportQuery, AuditReportPage, string> | undefined;
  let updateSessionFiles: DataLoader<string, readonly UpdateSessionFileRow[]> | undefined;
  return {
    get auditReport() {
      return (auditReport ??= new DataLoader(
        async (queries) => {
          const identity = upstreams.identity;
          if (!identity) return queries.map(() => notConfigured('identity'));
          return settle(queries.map((q) => budgeted('identity', 'audit-report', () => identity.auditReport(q, call))));
        },
        { cacheKeyFn: auditQueryKey },
      ));
    },
    get updateSessionFiles() {
      return (updateSessionFiles ??= new DataLoader(async (ids) => {
        const contentLibrary = upstreams.contentLibrary;
        if (!contentLibrary) return ids.map(() => notConfigured('content-library'));
        return settle(
          ids.map((id) => budgeted('content-library', 'update-session-files', () => contentLibrary.listUpdateSessionFiles(id, call))),
        );
      }));
    },
    upstreamCalls: () => started,
  };
}
