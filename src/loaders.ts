/**
 * Per-request dataloaders: the same upstream call within one GraphQL request happens once.
 * Created anew for every request; across requests only closed audit windows are kept (see
 * src/upstream/identity/audit-cache.ts).
 */
import DataLoader from 'dataloader';
import pLimit, { type LimitFunction } from 'p-limit';
import { UpstreamError, type UpstreamService } from './errors.js';
import type { FileInfo } from './upstream/content-library/schemas.js';
import type { AuditReportPage, AuditReportQuery, CallOptions, Upstreams } from './upstream/types.js';

/** Distinct update sessions fetched at once within one request. */
const SESSION_CONCURRENCY = 8;

export interface Loaders {
  readonly auditReport: DataLoader<AuditReportQuery, AuditReportPage, string>;
  readonly updateSessionFiles: DataLoader<string, FileInfo[]>;
}

function notConfigured(service: UpstreamService): never {
  throw new UpstreamError(
    'UPSTREAM_NOT_CONFIGURED',
    service,
    `The ${service} upstream is not configured on this gateway.`,
  );
}

const auditQueryKey = (q: AuditReportQuery) =>
  `${q.fromMillis}|${q.toMillis}|${q.objectType ?? ''}|${q.action ?? ''}|${q.pageSize}|${q.startIndex}`;

/** Settles every key on its own, so one failing call never fails the others of the batch. */
const settle = <T>(promises: Promise<T>[]) =>
  Promise.allSettled(promises).then((results) =>
    results.map((r) => (r.status === 'fulfilled' ? r.value : toError(r.reason))),
  );
const toError = (reason: unknown) => (reason instanceof Error ? reason : new Error(String(reason)));

export function createLoaders(upstreams: Upstreams, call: CallOptions): Loaders {
  // Made on first use: most requests never read an update session.
  let limit: LimitFunction | undefined;
  return {
    auditReport: new DataLoader(
      (queries) => {
        const identity = upstreams.identity ?? notConfigured('identity');
        return settle(queries.map((q) => identity.auditReport(q, call)));
      },
      { cacheKeyFn: auditQueryKey },
    ),
    updateSessionFiles: new DataLoader((ids) => {
      const contentLibrary = upstreams.contentLibrary ?? notConfigured('content-library');
      const sessions = (limit ??= pLimit(SESSION_CONCURRENCY));
      return settle(ids.map((id) => sessions(() => contentLibrary.listUpdateSessionFiles(id, call))));
    }),
  };
}
