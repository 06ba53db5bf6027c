/** Audit pages of settled windows (upstreams ingest late), one call per miss; with REDIS_URL, Redis is a second tier. */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { IdentityConfig } from '../../lib/config.js';
import { UpstreamError } from '../../lib/errors.js';
import { untilAborted } from '../deadline.js';
import { errorForAbort } from '../error-mapping.js';
import { emit, type CacheLookupEvent, type UpstreamEvents } from '../types.js';
import type { AuditReportPage, AuditReportQuery, CallOptions } from '../types.js';
import type { SharedStore } from '../shared-store/store.js';
import { pageHeapBytes, readAuditRows } from './audit-row-parsing.js';

const DEFAULT_AUDIT_CACHE_TTL_MS = 10 * 60_000;
const CACHE_LABEL = 'audit-report';
const SHARED_KIND = 'audit-page';
const COUNTED = { hit: 'hits', miss: 'misses', bypass: 'bypasses' } as const;
const FIRST_POLL_MS = 10;
const LAST_POLL_MS = 100;

export interface AuditPageCacheOptions {
  readonly maxBytes: number;
  readonly settleMs: number;
  readonly ttlMs?: number;
  /** Wall clock in epoch ms, for the settle rule and the TTL. */
  readonly now?: () => number;
  readonly events?: UpstreamEvents | undefined;
  readonly shared?: SharedStore | undefined;
}

/** Where a page came from and whose rights fetched it: sharing stays safe should rights ever differ per caller. */
export type AuditPageOwner = Pick<IdentityConfig, 'baseUrl' | 'clientId'>;

export type MeasuredAuditPage = { readonly page: AuditReportPage; readonly heapBytes: number };

interface PageFetch {
  readonly fetch: (call: CallOptions) => Promise<MeasuredAuditPage>;
  readonly call: CallOptions;
  readonly pageSize: number;
}

/** A page with unreadable rows reaches every waiter as a rejection: the one outcome lru-cache does not keep. */
class UnkeptPage {
  constructor(readonly measured: MeasuredAuditPage) {}
}

export class AuditPageCache {
  readonly #lru: LRUCache<string, MeasuredAuditPage, PageFetch>;
  readonly #now: () => number;
  readonly #counts = { hits: 0, misses: 0, bypasses: 0, evictions: 0 };

  constructor(private readonly options: AuditPageCacheOptions) {
    this.#now = options.now ?? Date.now;
    this.#lru = new LRUCache<string, MeasuredAuditPage, PageFetch>({
      maxSize: options.maxBytes,
      sizeCalculation: (entry) => Math.max(1, entry.heapBytes),
      ttl: options.ttlMs ?? DEFAULT_AUDIT_CACHE_TTL_MS,
      ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
      dispose: (_entry, _key, reason) => {
        if (reason === 'evict') this.#counts.evictions++;
      },
      // Others may join this very call; one whose entry is evicted meanwhile still answers its waiters.
      ignoreFetchAbort: true,
      fetchMethod: async (key, _stale, { context }) => {
        const measured = options.shared ? await this.#readShared(options.shared, key, context) : await readUpstream(context);
        if (!isKept(measured)) throw new UnkeptPage(measured);
        return measured;
      },
    });
  }

  stats() {
    return {
      entries: this.#lru.size,
      bytes: this.#lru.calculatedSize,
      maxBytes: this.options.maxBytes,
      ...this.#counts,
    };
  }

  async read(owner: AuditPageOwner, query: AuditReportQuery, call: CallOptions, fetch: PageFetch['fetch']): Promise<AuditReportPage> {
    if (query.toMillis > this.#now() - this.options.settleMs) {
      this.#lookup('bypass');
      return (await fetch(call)).page;
    }
    const key = cacheKey(owner, query);
    const kept = this.#lru.get(key);
    if (kept) {
      this.#lookup('hit');
      call.log.debug({ cache: CACHE_LABEL, rows: kept.page.rows.length }, 'audit report page served from the cache');
      return kept.page;
    }
    if (call.signal?.aborted) throw aborted(call.signal);
    const status: LRUCache.Status<string, MeasuredAuditPage, PageFetch> = {};
    const flight = this.#lru.fetch(key, { context: { fetch, call, pageSize: query.pageSize }, status }) as Promise<MeasuredAuditPage>;
    // A rejection nobody waits for any more must not go unhandled.
    flight.catch(() => undefined);
    if (status.fetch === 'inflight') {
      this.#lookup('hit');
      call.log.debug({ cache: CACHE_LABEL, joined: true }, 'audit report page: joined the upstream call in flight');
    } else {
      this.#lookup('miss');
    }
    const { signal } = call;
    try {
      return (await (signal ? untilAborted(flight, signal) : flight)).page;
    } catch (error) {
      // The caller left or its deadline passed: it ends as the direct call would.
      if (signal?.aborted && !(error instanceof UpstreamError)) throw aborted(signal);
      if (error instanceof UnkeptPage) return error.measured.page;
      throw error;
    }
  }

  async #readShared(shared: SharedStore, key: string, context: PageFetch): Promise<MeasuredAuditPage> {
    // A digest: the key names the upstream and the client id, and Redis Cluster slots by the `{…}` part.
    const pageKey = shared.key(`audit-page:{${createHash('sha256').update(key).digest('base64url')}}`);
    const lockKey = `${pageKey}:fill`;
    const waitMs = 4 * shared.timeoutMs;
    const until = performance.now() + waitMs;
    for (let pollMs = FIRST_POLL_MS; ; pollMs = Math.min(LAST_POLL_MS, pollMs * 2)) {
      const stored = await sharedPage(shared, pageKey, context);
      if (stored) return stored;
      const lock = await shared.lock(lockKey, waitMs);
      if (lock.outcome === 'acquired') {
        try {
          const measured = await readUpstream(context);
          if (isKept(measured)) await shared.set(pageKey, SHARED_KIND, serializePage(measured), this.#lru.ttl);
          return measured;
        } finally {
          await shared.unlock(lockKey, lock.token);
        }
      }
      if (lock.outcome === 'unavailable' || performance.now() >= until) return readUpstream(context);
      // Another replica is reading it: look for its page again, or take the lock once it goes (a page not kept).
      await sleep(pollMs);
    }
  }

  #lookup(outcome: CacheLookupEvent['outcome']): void {
    this.#counts[COUNTED[outcome]]++;
    emit(this.options.events?.onCacheLookup, { cache: CACHE_LABEL, outcome });
  }
}

const readUpstream = (context: PageFetch) => context.fetch({ log: context.call.log });

const isKept = (measured: MeasuredAuditPage) => measured.page.rows.every((row) => row.ok);

/** A kept page as the upstream sends its rows (the record's JSON in the last column), to be read again the same way. */
function serializePage(measured: MeasuredAuditPage): string {
  return JSON.stringify(measured.page.rows.map((row) => [JSON.stringify((row as { record: unknown }).record)]));
}

/** The page stored under `pageKey`, read as an upstream page is; undefined unless every row reads. */
async function sharedPage(shared: SharedStore, pageKey: string, context: PageFetch): Promise<MeasuredAuditPage | undefined> {
  const payload = await shared.get(pageKey, SHARED_KIND);
  if (payload === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (!Array.isArray(data) || data.length > context.pageSize) return undefined;
  const read = readAuditRows(data);
  if (read.failed.length > 0) return undefined;
  context.call.log.debug({ cache: CACHE_LABEL, rows: read.rows.length }, 'audit report page served from the shared store');
  return { page: { rows: read.rows }, heapBytes: pageHeapBytes(Buffer.byteLength(payload), read) };
}

/** Everything that determines the answer; JSON keeps free-text parts (objectType) unambiguous. */
function cacheKey({ baseUrl, clientId }: AuditPageOwner, query: AuditReportQuery): string {
  const { fromMillis, toMillis, objectType = null, action = null, pageSize, startIndex } = query;
  return JSON.stringify([baseUrl, clientId, fromMillis, toMillis, objectType, action, pageSize, startIndex]);
}

const aborted = (signal: AbortSignal) => errorForAbort('identity', signal, CACHE_LABEL);
