/**
 * One filter's live tail across replicas: the lease holder appends its polls to the stream, which every replica reads in
 * one order. The lease lasts 2/3 of `leaseMs`, renewed or contended for every 1/3: a dead holder is replaced within it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { auditRecordSchema } from '../../upstream/identity/schemas.js';
import { FilterLease } from '../../upstream/shared-store/filter-lease.js';
import type { BlockingReader, SharedStore, StreamEntry } from '../../upstream/shared-store/store.js';
import { toLiveRecord, type LiveRecord } from './records.js';

/** What this replica does for a filter at its next poll. */
export type FeedRole = 'holder' | 'follower' | 'local';

export interface SharedFeedOptions {
  readonly store: SharedStore;
  readonly leaseMs: number;
  /** How far back the stream is kept. */
  readonly horizonMs: number;
  readonly log: Logger;
  readonly now: () => number;
}

const ENTRY_KIND = 'live-record';
const ENTRY_FIELD = 'r';
const BLOCK_MS = 2000;
const RETRY_READ_MS = 200;
/** Entries per append script and per catch-up range. */
const BATCH = 500;
/** Stream ids run on Redis's clock, record times on the upstream's: a reader starts this much earlier. */
const CLOCK_SKEW_MS = 60_000;

/** The stream no longer holds what a resume needs: it is read from the upstream instead. */
const streamGap = () => new Error('the live audit stream does not hold the position asked');

function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bMs, bSeq] = b.split('-').map(BigInt) as [bigint, bigint];
  return aMs === bMs ? Number(aSeq - bSeq) : aMs < bMs ? -1 : 1;
}

export class SharedFeed {
  readonly #options: SharedFeedOptions;
  readonly #lease: FilterLease;
  readonly #reader: BlockingReader;
  #holding = false;
  #stopped = false;
  /** A poll interval may exceed the lease: between polls the holder renews it and the others contend for it. */
  #keeping: NodeJS.Timeout | undefined;
  #onLeaseTaken: (() => void) | undefined;

  constructor(filterKey: string, options: SharedFeedOptions) {
    this.#options = options;
    this.#lease = new FilterLease(options.store, filterKey, Math.ceil((options.leaseMs * 2) / 3));
    this.#reader = options.store.blockingReader(BLOCK_MS);
  }

  async role(): Promise<FeedRole> {
    const { store } = this.#options;
    this.#holding = store.isUp() && (await this.#lease.acquire()) && store.isUp();
    if (!store.isUp()) return 'local';
    return this.#holding ? 'holder' : 'follower';
  }

  async #keepLease(): Promise<void> {
    if (!this.#options.store.isUp()) return;
    if (this.#holding) {
      if (!(await this.#lease.renew())) this.#holding = false;
      return;
    }
    const taken = await this.#lease.acquire();
    if (taken && this.#stopped) void this.#lease.release();
    // Taken meanwhile by a poll of this replica: that poll reads as the holder already.
    if (!taken || this.#stopped || this.#holding) return;
    this.#holding = true;
    this.#onLeaseTaken?.();
  }

  /** Appends a poll's records, oldest first, while the lease is still this replica's. */
  async append(records: readonly LiveRecord[]) {
    const { store, now, horizonMs } = this.#options;
    const { streamKey } = this.#lease;
    for (let at = 0; at < records.length; at += BATCH) {
      const entries = records.slice(at, at + BATCH).map((r) => store.seal(streamKey, ENTRY_KIND, JSON.stringify(r.record)));
      const answer = await this.#lease.append(entries, now() - horizonMs);
      if (answer.outcome !== 'appended') {
        if (answer.outcome === 'fenced') this.#holding = false;
        // Part of a poll appended: the rest is delivered as the caller decides, its duplicates known by uuid.
        return answer.outcome;
      }
    }
    return 'appended' as const;
  }

  /** Hands `deliver` the stream's entries from `fromMillis` on (less the clock skew) until stopped; contends for the lease meanwhile. */
  follow(fromMillis: number, deliver: (records: LiveRecord[]) => void, onLeaseTaken: () => void): void {
    this.#onLeaseTaken = onLeaseTaken;
    let position = `${Math.max(0, Math.floor(fromMillis - CLOCK_SKEW_MS))}-0`;
    void (async () => {
      while (!this.#stopped) {
        const entries = await this.#reader.read(this.#lease.streamKey, position);
        if (this.#stopped) return;
        if (entries === undefined) {
          await sleep(RETRY_READ_MS);
          continue;
        }
        if (entries.length === 0) continue;
        position = entries.at(-1)![0];
        const records = this.#decode(entries);
        if (records.length > 0) deliver(records);
      }
    })();
    // Following means having subscribers: contend for the lease from now, not only from the first poll.
    this.#keeping = setInterval(() => void this.#keepLease(), this.#options.leaseMs / 3);
    this.#keeping.unref();
  }

  /** The entries after `position`, in batches; a stream gap when the stream no longer holds it or Redis does not answer. */
  async *after(position: string): AsyncGenerator<LiveRecord[], void, undefined> {
    const { store } = this.#options;
    const first = await store.streamFirstId(this.#lease.streamKey);
    if (!first || compareStreamIds(first, position) > 0) throw streamGap();
    let from = position;
    for (;;) {
      const entries = await store.streamAfter(this.#lease.streamKey, from, BATCH);
      if (entries === undefined) throw streamGap();
      if (entries.length === 0) return;
      from = entries.at(-1)![0];
      yield this.#decode(entries);
      if (entries.length < BATCH) return;
    }
  }

  #decode(entries: readonly StreamEntry[]): LiveRecord[] {
    const records: LiveRecord[] = [];
    let foreign = 0;
    for (const [id, fields] of entries) {
      const record = this.#recordOf(fields);
      if (record) records.push({ ...toLiveRecord(record), position: id });
      else foreign++;
    }
    if (foreign > 0) this.#options.log.warn({ foreign, stream: this.#lease.streamKey }, 'live audit stream entries skipped: not written by the gateway');
    return records;
  }

  #recordOf(fields: readonly string[]) {
    if (fields.length !== 2 || fields[0] !== ENTRY_FIELD) return undefined;
    const payload = this.#options.store.open(this.#lease.streamKey, ENTRY_KIND, fields[1]);
    if (payload === undefined) return undefined;
    try {
      const parsed = auditRecordSchema.safeParse(JSON.parse(payload));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stops reading, and gives the lease up if held: a replica that still has subscribers takes it. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#keeping);
    this.#reader.close();
    if (this.#holding) void this.#lease.release();
    this.#holding = false;
  }
}
