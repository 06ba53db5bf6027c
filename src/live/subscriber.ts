/**
 * One live subscription: what it has delivered (for exactly-once and for its resume tokens), a
 * bounded queue of records waiting for the client, and the async iterator GraphQL reads.
 *
 * A record is accepted once: not stamped before the subscription's floor, not older than the
 * settle time before the newest record it delivered (a re-read of that time is all that can bring
 * it back, and it was delivered then), and not already delivered or queued (by digest).
 * Records move from the queue to `delivered` as the client takes them, so a token describes the
 * stream right after its own record, never records queued behind it. That moment (and the queue's
 * length, for the slow-client cut-off) is what a Repeater's buffers do not expose, hence this
 * small iterator of its own.
 */
import { GatewayError } from '../errors.js';
import type { AuditRecord } from '../upstream/identity/schemas.js';
import type { LiveRecord } from './records.js';
import { encodeResumeToken, type DeliveredEntry } from './resume-token.js';

/** What the iterator yields: a record with its token, or the error that ends the stream. */
export type LiveItem =
  | { readonly record: AuditRecord; resumeAfter(): string; readonly error?: undefined }
  | { readonly error: GatewayError };

export interface SubscriberOptions {
  readonly filterKey: string;
  readonly floor: number;
  readonly settleMs: number;
  /** Records the client may leave unread before it counts as too slow. */
  readonly maxBuffered: number;
  readonly now: () => number;
  /** Called once when the stream ends, for whatever reason. */
  readonly onClose: (subscriber: LiveSubscriber) => void;
  /** Where a resumed stream starts: records its predecessor delivered. */
  readonly resumedFrom?: { readonly newest: number; readonly delivered: readonly DeliveredEntry[] };
}

export class LiveSubscriber implements AsyncIterableIterator<LiveItem> {
  readonly floor: number;
  readonly #options: SubscriberOptions;
  /** Delivered within the settle time before `#newest`: digest -> timestamp. */
  #delivered = new Map<string, number>();
  #sweepAt = 256;
  #newest: number | undefined;
  #queue: LiveRecord[] = [];
  #queued = new Set<string>();
  /** While the catch-up read runs, the poller's batches wait here. */
  #held: LiveRecord[][] | undefined;
  #ending: GatewayError | 'complete' | undefined;
  #closed = false;
  #waiting: ((result: IteratorResult<LiveItem>) => void) | undefined;
  /** Aborts when the stream closes: a catch-up read in flight stops at once. */
  readonly #abort = new AbortController();

  constructor(options: SubscriberOptions) {
    this.#options = options;
    this.floor = options.floor;
    if (options.resumedFrom) {
      this.#newest = options.resumedFrom.newest;
      for (const entry of options.resumedFrom.delivered) this.#delivered.set(entry.digest, entry.timestamp);
    }
  }

  /** Aborted once the stream has closed (ended, or its client left). */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Holds the poller's batches until `release`, so a catch-up read is delivered first. */
  hold(): void {
    this.#held ??= [];
  }

  release(catchUp: readonly LiveRecord[]): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    this.offer(catchUp);
    for (const batch of held) this.offer(batch);
  }

  /** Queues the records this subscription has not delivered; a client far behind is cut off. */
  offer(records: readonly LiveRecord[]): void {
    if (this.#closed || this.#ending) return;
    if (this.#held) {
      if (records.length > 0) this.#held.push([...records]);
      return;
    }
    if (this.#queue.length > this.#options.maxBuffered) {
      this.#queue = [];
      this.#queued.clear();
      this.fail(
        new GatewayError(
          'RATE_LIMITED',
          'The subscription was ended because the client did not keep up with the records it was sent.',
          { queued: this.#options.maxBuffered },
        ),
      );
      return;
    }
    for (const record of records) {
      if (record.timestamp < this.floor) continue;
      if (this.#newest !== undefined && record.timestamp < this.#newest - this.#options.settleMs) continue;
      if (this.#delivered.has(record.digest) || this.#queued.has(record.digest)) continue;
      this.#queue.push(record);
      this.#queued.add(record.digest);
    }
    this.#flush();
  }

  /** Ends the stream after the queued records with this error. */
  fail(error: GatewayError): void {
    this.#ending ??= error;
    this.#flush();
  }

  /** Ends the stream after the queued records. */
  complete(): void {
    this.#ending ??= 'complete';
    this.#flush();
  }

  #take(record: LiveRecord): LiveItem {
    this.#queued.delete(record.digest);
    this.#delivered.set(record.digest, record.timestamp);
    if (this.#newest === undefined || record.timestamp > this.#newest) this.#newest = record.timestamp;
    if (this.#delivered.size > this.#sweepAt) this.#sweep();
    return { record: record.record, resumeAfter: () => this.#token() };
  }

  /** Forgets records older than the settle time before the newest: no re-read reaches them. */
  #sweep(): void {
    const bound = (this.#newest ?? 0) - this.#options.settleMs;
    for (const [digest, timestamp] of this.#delivered) if (timestamp < bound) this.#delivered.delete(digest);
    this.#sweepAt = Math.max(256, this.#delivered.size * 2);
  }

  #token(): string {
    const newest = this.#newest ?? this.floor;
    const bound = newest - this.#options.settleMs;
    const delivered: DeliveredEntry[] = [];
    for (const [digest, timestamp] of this.#delivered) if (timestamp >= bound) delivered.push({ digest, timestamp });
    return encodeResumeToken({
      filterKey: this.#options.filterKey,
      newest,
      floor: Math.max(this.floor, bound),
      issuedAt: this.#options.now(),
      delivered,
    });
  }

  #flush(): void {
    const waiting = this.#waiting;
    if (!waiting) return;
    const next = this.#nextResult();
    if (next) {
      this.#waiting = undefined;
      waiting(next);
    }
  }

  #nextResult(): IteratorResult<LiveItem> | undefined {
    const record = this.#queue.shift();
    if (record) return { done: false, value: this.#take(record) };
    if (this.#ending === undefined) return undefined;
    if (this.#ending !== 'complete') {
      const error = this.#ending;
      this.#ending = 'complete';
      return { done: false, value: { error } };
    }
    this.#close();
    return { done: true, value: undefined };
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#queued.clear();
    this.#held = undefined;
    this.#abort.abort();
    this.#options.onClose(this);
  }

  next(): Promise<IteratorResult<LiveItem>> {
    if (this.#closed) return Promise.resolve({ done: true, value: undefined });
    const ready = this.#nextResult();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  /** The client left (or GraphQL stopped reading): free everything now. */
  return(): Promise<IteratorResult<LiveItem>> {
    this.#close();
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.({ done: true, value: undefined });
    return Promise.resolve({ done: true, value: undefined });
  }

  throw(): Promise<IteratorResult<LiveItem>> {
    return this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
