/** A live subscription's iterator: a Repeater hides when the client takes a record (a token's moment) and its queue's length. */
import { GatewayError, type ErrorCode } from '../../lib/errors.js';
import type { AuditRecord } from '../../upstream/identity/schemas.js';
import { PendingRecords, SettleWindow, type LiveRecord } from './records.js';
import { encodeResumeToken, NewestDelivered, type ResumePoint } from './resume-token.js';

export type LiveItem =
  | { readonly record: AuditRecord; resumeAfter(): string; readonly error?: undefined }
  | { readonly error: GatewayError };

export interface SubscriberOptions {
  readonly filterKey: string;
  readonly floor: number;
  readonly settleMs: number;
  /** Records the client may fall further behind than it has been before it is cut off. */
  readonly maxBuffered: number;
  readonly now: () => number;
  /** Called once, as soon as the stream takes no more records. */
  readonly onClose: (subscriber: LiveSubscriber, reason: LiveEndReason) => void;
  readonly onDelivered?: (() => void) | undefined;
  readonly resumedFrom?: Pick<ResumePoint, 'newest' | 'delivered' | 'position'> | undefined;
  /** Ends the client's connection if it holds data it could not send: the transport waits for ever. */
  readonly endIfUndrained?: (() => void) | undefined;
  readonly stallMs?: number | undefined;
  readonly endGraceMs?: number | undefined;
}

/** The gateway completes streams only when it shuts down. */
export type LiveEndReason = 'client' | 'shutdown' | ErrorCode;

/** Both transports ask for the next item once the last is written out: a longer pause with records waiting does not drain. */
const DEFAULT_STALL_MS = 10_000;
/** Time a cut-off client's connection has to drain, and an ended stream's client to take the rest. */
const DEFAULT_END_GRACE_MS = 5_000;

export class LiveSubscriber implements AsyncIterableIterator<LiveItem> {
  readonly floor: number;
  readonly #options: SubscriberOptions;
  readonly #window: SettleWindow;
  readonly #newestDelivered = new NewestDelivered();
  /** The shared stream's id of the newest record taken from it. */
  #position: string | undefined;
  #pending = new PendingRecords();
  #held: LiveRecord[][] | undefined;
  #ending: GatewayError | 'complete' | undefined;
  #closed = false;
  #waiting: ((result: IteratorResult<LiveItem>) => void) | undefined;
  readonly #abort = new AbortController();
  /** Aborted once the stream wants no more records: a catch-up read in flight stops at once. */
  readonly signal = this.#abort.signal;
  #caughtUp: (() => void) | undefined;
  #connectionChecked = false;
  #lastPull = performance.now();
  #stallTimer: NodeJS.Timeout | undefined;
  readonly #endGraceMs: number;

  constructor(options: SubscriberOptions) {
    this.#options = options;
    this.floor = options.floor;
    this.#endGraceMs = options.endGraceMs ?? DEFAULT_END_GRACE_MS;
    this.#window = new SettleWindow(options.floor, options.settleMs, options.resumedFrom?.newest);
    this.#position = options.resumedFrom?.position;
    for (const entry of options.resumedFrom?.delivered ?? []) this.#remember(entry.digest, entry.timestamp);
  }

  knows(digest: string): boolean {
    return this.#window.has(digest) || this.#pending.has(digest);
  }

  /** Holds the poller's batches until `release`, so a catch-up read is delivered first. */
  hold(): void {
    this.#held ??= [];
  }

  /** Queues a part of the catch-up, the last letting the held batches through; resolves once the client took it all. */
  release(part: readonly LiveRecord[], last = true): Promise<void> {
    if (!this.signal.aborted) {
      for (const record of part) if (this.#accepts(record)) this.#pending.addCatchUp(record);
      if (last) {
        for (const batch of this.#held ?? []) this.#add(batch);
        this.#held = undefined;
        this.#pending.startHere();
      }
    }
    this.#flush();
    this.#caughtUp?.();
    const caughtUp = new Promise<void>((resolve) => (this.#caughtUp = resolve));
    this.#checkCaughtUp();
    return caughtUp;
  }

  /** Checked before the batch is queued: a burst larger than `maxBuffered` reaches a client that reads it in time. */
  offer(records: readonly LiveRecord[]): void {
    if (this.signal.aborted) return;
    if (this.#held) {
      this.#held.push([...records]);
      return;
    }
    if (this.#pending.behind > this.#options.maxBuffered) {
      this.#cutOff();
      return;
    }
    this.#add(records);
    this.#flush();
  }

  #add(records: readonly LiveRecord[]): void {
    for (const record of records) if (this.#accepts(record)) this.#pending.add(record);
  }

  #accepts(record: LiveRecord): boolean {
    return this.#window.isNew(record.digest, record.timestamp) && !this.#pending.has(record.digest);
  }

  /** Takes no more records: the client reads what waits, then the error if any, then the end. */
  end(ending: GatewayError | 'complete' = 'complete'): void {
    this.#ending ??= ending;
    this.#detach();
    // A pause timed against the stall time is timed again against the shorter end grace.
    this.#stopStallTimer();
    this.#flush();
  }

  #cutOff(): void {
    this.#pending = new PendingRecords();
    this.#lastPull = performance.now();
    setTimeout(() => this.#endConnectionIfUndrained(), this.#endGraceMs).unref();
    const message = 'The subscription was ended because the client did not keep up with the records it was sent.';
    this.end(new GatewayError('RATE_LIMITED', message, { queued: this.#options.maxBuffered }));
  }

  #detach(): void {
    if (this.signal.aborted) return;
    this.#held = undefined;
    this.#abort.abort();
    this.#caughtUp?.();
    const ending = this.#ending;
    this.#options.onClose(this, ending === undefined ? 'client' : ending === 'complete' ? 'shutdown' : ending.code);
  }

  #checkCaughtUp(): void {
    if (this.signal.aborted || !this.#pending.catchingUp) this.#caughtUp?.();
  }

  /** How long the client may pause: only while something waits for it that it has not asked for. */
  #pauseAllowed(): number | undefined {
    if (this.#closed || this.#waiting) return undefined;
    if (this.#ending !== undefined) return this.#endGraceMs;
    return this.#pending.size > 0 ? (this.#options.stallMs ?? DEFAULT_STALL_MS) : undefined;
  }

  #armStallTimer(): void {
    if (this.#stallTimer !== undefined) return;
    const limit = this.#pauseAllowed();
    if (limit === undefined) return;
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = undefined;
      const allowed = this.#pauseAllowed();
      if (allowed === undefined) return;
      if (performance.now() - this.#lastPull < allowed) this.#armStallTimer();
      else this.#stalled();
    }, Math.max(0, limit - (performance.now() - this.#lastPull)));
    this.#stallTimer.unref();
  }

  #stopStallTimer(): void {
    clearTimeout(this.#stallTimer);
    this.#stallTimer = undefined;
  }

  #stalled(): void {
    if (this.#ending === undefined) {
      this.#cutOff();
      return;
    }
    // Ended, and its client has not taken what is left: its connection does not drain.
    this.#endConnectionIfUndrained();
    this.#close();
  }

  /** Once: a cut-off's grace and a stall after it end at the same time. */
  #endConnectionIfUndrained(): void {
    if (this.#connectionChecked) return;
    this.#connectionChecked = true;
    this.#options.endIfUndrained?.();
  }

  #remember(digest: string, timestamp: number): void {
    this.#window.note(digest, timestamp);
    this.#newestDelivered.add({ digest, timestamp });
  }

  #take(record: LiveRecord): LiveItem {
    this.#options.onDelivered?.();
    this.#remember(record.digest, record.timestamp);
    if (record.position !== undefined) this.#position = record.position;
    this.#checkCaughtUp();
    return { record: record.record, resumeAfter: () => this.#token() };
  }

  #token(): string {
    const newest = this.#window.newest ?? this.floor;
    return encodeResumeToken({
      filterKey: this.#options.filterKey,
      newest,
      floor: this.#window.start,
      issuedAt: this.#options.now(),
      delivered: this.#newestDelivered.since(newest - this.#options.settleMs),
      position: this.#position,
    });
  }

  #flush(): void {
    const waiting = this.#waiting;
    if (waiting) {
      const next = this.#nextResult();
      if (!next) return;
      this.#waiting = undefined;
      this.#lastPull = performance.now();
      waiting(next);
    }
    this.#armStallTimer();
  }

  #nextResult(): IteratorResult<LiveItem> | undefined {
    const record = this.#pending.take();
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
    this.#closed = true;
    this.#stopStallTimer();
    this.#pending = new PendingRecords();
    this.#detach();
  }

  next(): Promise<IteratorResult<LiveItem>> {
    if (this.#closed) return Promise.resolve({ done: true, value: undefined });
    this.#lastPull = performance.now();
    const ready = this.#nextResult();
    if (ready) {
      this.#armStallTimer();
      return Promise.resolve(ready);
    }
    return new Promise((resolve) => (this.#waiting = resolve));
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
