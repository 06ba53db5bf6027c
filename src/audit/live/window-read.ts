/** One time window's records, oldest first, each once by uuid; out of ReadBudget, the oldest part, for the caller to read on. */
import type { Logger } from 'pino';
import { ByteReservations, type ByteHolding } from '../../lib/byte-reservations.js';
import { GatewayError, UpstreamError } from '../../lib/errors.js';
import { Turns } from '../../lib/turns.js';
import { errorForAbort } from '../../upstream/error-mapping.js';
import type { AuditRecord } from '../../upstream/identity/schemas.js';
import type { AuditRowResult, IdentityApi } from '../../upstream/types.js';
import { UPSTREAM_MAX_PAGE_SIZE } from '../paging/limits.js';
import { HeapEstimate } from './heap-estimate.js';
import { oldestFirst, toLiveRecord, type LiveFilter, type LiveRecord } from './records.js';

/** A window not ended within this many pages is an upstream error: delivering part would skip its oldest records. */
export const MAX_PAGES_PER_READ = 40;
export const DEFAULT_LIVE_READ_BYTES = 16 * 1024 * 1024;
/** Upstream pages all live reads have in flight at once: a full page is large to receive and parse. */
export const LIVE_PAGES_IN_FLIGHT = 4;
/** The LiveRecord around a record, its digest and uuid, and its entry in a read's map. */
const LIVE_RECORD_BYTES = 256;

/** The estimated heap all live reads keep, and their page turns: against endless pages of large records. */
export class ReadBudget extends ByteReservations {
  readonly pages = new Turns(LIVE_PAGES_IN_FLIGHT);
}

export interface WindowRead {
  readonly identity: IdentityApi;
  readonly filter: LiveFilter;
  readonly fromMillis: number;
  readonly toMillis: number;
  readonly log: Logger;
  readonly budget: ReadBudget;
  /** Records the caller already has: neither kept nor counted against the budget. */
  readonly known?: (record: AuditRecord) => boolean;
  readonly signal?: AbortSignal;
  /** performance.now()'s clock. */
  readonly expiresAt?: number;
  readonly pageSize?: number;
}

export interface WindowPart {
  readonly records: LiveRecord[];
  /** False when newer records were left out for the memory bound. */
  readonly complete: boolean;
  /** Gives the records' share of the budget back, once they are handed over. */
  release(): void;
}

type Kept = { readonly record: AuditRecord; readonly bytes: number };

const NEVER = new AbortController().signal;

class OldestKept {
  readonly #holding: ByteHolding;
  readonly #estimate = new HeapEstimate();
  readonly #byUuid = new Map<string, Kept>();
  /** Every record kept is older than this one, and no newer one is kept any more. */
  #leftOut: AuditRecord | undefined;

  constructor(budget: ReadBudget) {
    this.#holding = budget.holding();
  }

  get complete(): boolean {
    return this.#leftOut === undefined;
  }

  /** Keeps what fits of one page's new records; if not all do, the oldest of these and the kept ones. */
  add(records: readonly AuditRecord[]): void {
    const candidates = new Map<string, Kept>();
    for (const record of records) {
      if (this.#byUuid.has(record.uuid) || candidates.has(record.uuid)) continue;
      if (this.#leftOut && oldestFirst(record, this.#leftOut) >= 0) continue;
      candidates.set(record.uuid, { record, bytes: LIVE_RECORD_BYTES + this.#estimate.valueBytes(record) });
    }
    let bytes = 0;
    for (const candidate of candidates.values()) bytes += candidate.bytes;
    if (this.#holding.add(bytes)) {
      for (const [uuid, candidate] of candidates) this.#byUuid.set(uuid, candidate);
      return;
    }
    const all = [...this.#byUuid.values(), ...candidates.values()].sort((a, b) => oldestFirst(a.record, b.record));
    this.#holding.resize(0);
    this.#byUuid.clear();
    for (const candidate of all) {
      if (!this.#holding.add(candidate.bytes)) {
        this.#leftOut = candidate.record;
        return;
      }
      this.#byUuid.set(candidate.record.uuid, candidate);
    }
  }

  records(): LiveRecord[] {
    return [...this.#byUuid.values()].map((kept) => toLiveRecord(kept.record)).sort(oldestFirst);
  }

  release(): void {
    this.#holding.release();
    this.#byUuid.clear();
  }
}

export async function readWindow(read: WindowRead): Promise<WindowPart> {
  const { fromMillis, toMillis, log } = read;
  const pageSize = read.pageSize ?? UPSTREAM_MAX_PAGE_SIZE;
  const kept = new OldestKept(read.budget);
  const outside = { earlier: 0, later: 0 };
  let unreadable = 0;
  try {
    for (let page = 0; ; page++) {
      if (page === MAX_PAGES_PER_READ) {
        const message = `The identity service's audit report did not end within ${MAX_PAGES_PER_READ} pages.`;
        throw new UpstreamError('UPSTREAM_INVALID_RESPONSE', 'identity', message, { pages: MAX_PAGES_PER_READ });
      }
      const giveBack = await read.budget.pages.take(read.signal ?? NEVER);
      if (!giveBack) throw errorForAbort('identity', read.signal!, 'live-audit-read-turn');
      let rows: readonly AuditRowResult[];
      try {
        const query = { ...read.filter, fromMillis, toMillis, pageSize, startIndex: page * pageSize };
        ({ rows } = await read.identity.auditReport(query, { log, signal: read.signal, expiresAt: read.expiresAt }));
        const fresh: AuditRecord[] = [];
        for (const row of rows) {
          if (!row.ok) unreadable++;
          // A record stamped outside the window is delivered by the read whose window holds it.
          else if (row.record.timestamp < fromMillis) outside.earlier++;
          else if (row.record.timestamp > toMillis) outside.later++;
          else if (!read.known?.(row.record)) fresh.push(row.record);
        }
        kept.add(fresh);
      } finally {
        giveBack();
      }
      if (rows.length < pageSize) break;
    }
  } catch (error) {
    kept.release();
    throw error;
  }
  // An unreadable row has no uuid or time to deliver it by; the identity client logged why.
  if (unreadable > 0) log.warn({ unreadable }, 'live audit rows skipped: records unreadable');
  if (outside.earlier + outside.later > 0) {
    log.warn({ ...outside, fromMillis, toMillis }, 'live audit rows skipped: stamped outside the window read');
  }
  const records = kept.records();
  if (!kept.complete) {
    // Other reads hold the whole budget: this one kept nothing, and is retried as a failed read.
    if (records.length === 0) {
      throw new GatewayError('RATE_LIMITED', 'The gateway is reading as many live audit records as it may hold; try again later.', {
        limitBytes: read.budget.max,
      });
    }
    log.info({ records: records.length, limitBytes: read.budget.max }, 'live audit read kept part of its window: memory bound');
  }
  return { records, complete: kept.complete, release: () => kept.release() };
}
