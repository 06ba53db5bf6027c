/**
 * One live subscription: what it has delivered (for exactly-once and for its resume tokens), the
 * records waiting for the client (a catch-up read, then a bounded number of live records), and the
 * async iterator GraphQL reads.
 *
 * A record is accepted once: not stamped before the subscription's floor, not older than the
 * settle time before the newest record it delivered (a re-read of that time is all that can bring
 * it back, and it was delivered then), and not already delivered or queued (by digest).
 * Records move from the queue to `delivered` as the client takes them, so a token describes the
 * stream right after its own record, never records queued behind it. That moment (and the queue's
 * length, for the slow-client cut-off) is what a Repeater's buffers do not expose, hence this
 * small iterator of its own.
 *
 * A client that does not keep up (more than `maxBuffered` records further behind than it has
 * been, or nothing taken for `stallMs` while records wait) is cut off: its records are dropped,
 * its slot and poller interest freed at once, and it is sent RATE_LIMITED; a connection that has
 * not drained `endGraceMs` later is ended. So is the connection of an ended stream whose client
 * takes nothing for `endGraceMs`: the transport would otherwise wait for that client for ever.
 */
import { GatewayError } from '../../lib/errors.js';
import type { AuditRecord } from '../../upstream/identity/schemas.js';
import { PendingRecords } from './pending.js';
import type { LiveRecord } from './records.js';
import { NewestDelivered } from './newest-delivered.js';
import { encodeResumeToken, type DeliveredEntry } from './resume-token.js';
import { StallWatch } from './stall-watch.js';

/** What the iterator yields: a record with its token, or the error that ends the stream. */
export type LiveItem =
  | { readonly record: AuditRecord; resumeAfter(): string; readonly error?: undefined }
  | { readonly error: GatewayError };

export interface SubscriberOptions {
  readonly filterKey: string;
  readonly floor: number;
  readonly settleMs: number;
  /** Records the client may fall further behind than it has been before it counts as too slow. */
  readonly maxBuffered: number;
  readonly now: () => number;
  /**
   * Called once as soon as the stream takes no more records (ended, cut off, client gone): frees its
   * slot. `ending` is how it ended: `client` when its client left first.
   */
  readonly onClose: (subscriber: LiveSubscriber, ending: SubscriberEnding) => void;
  /** Called for each record handed to the client. */
  readonly onDelivered?: (() => void) | undefined;
  /** Where a resumed stream starts: records its predecessor delivered. */
  readonly resumedFrom?: {
    readonly newest: number;
    readonly delivered: readonly DeliveredEntry[];
    readonly position?: string | undefined;
  };
}

/** How a stream ended: completed by the gateway, with an error, or left by its client. */
export type SubscriberEnding = 'complete' | GatewayError | 'client';

/** How a subscriber reaches its client's connection; see `LiveSubscriber.connect`. */
export interface ConnectionOptions {
  /** Ends the client's connection if it holds data it could not send: the transport waits for ever. */
  readonly endIfUndrained?: (() => void) | undefined;
  readonly stallMs?: number | undefined;
  readonly endGraceMs?: number | undefined;
}

/** A pause this long with records waiting: the connection does not drain. */
export const DEFAULT_STALL_MS = 10_000;
/** Time a cut-off client's connection has to drain, and an ended stream's client to take the rest. */
export const DEFAULT_END_GRACE_MS = 5_000;

export class LiveSubscriber implements AsyncIterableIterator<LiveItem> {
  readonly floor: number;
  readonly #options: SubscriberOptions;
  /** Delivered within the settle time before `#newest`: digest -> timestamp. */
  #delivered = new Map<string, number>();
  /** What this stream's tokens carry of `#delivered`. */
  readonly #newestDelivered = new NewestDelivered();
  #sweepAt = 256;
  #newest: number | undefined;
  /** The shared stream's id of the newest stream record taken (replicas sharing Redis). */
  #position: string | undefined;
  readonly #pending = new PendingRecords();
  /** While the catch-up read runs, the poller's batches wait here. */
  #held: LiveRecord[][] | undefined;
  #ending: GatewayError | 'complete' | undefined;
  /** No more records come: the slot and the poller's interest are given back. */
  #detached = false;
  #closed = false;
  #waiting: ((result: IteratorResult<LiveItem>) => void) | undefined;
  /** Aborts when no more records are wanted: a catch-up read in flight stops at once. */
  readonly #abort = new AbortController();
  #caughtUp: { promise: Promise<void>; resolve: () => void } | undefined;
  #connection: ConnectionOptions = {};
  #connectionChecked = false;
  readonly #stall = new StallWatch({ limitMs: () => this.#pauseAllowed(), onStall: () => this.#stalled() });

  constructor(options: SubscriberOptions) {
    this.#options = options;
    this.floor = options.floor;
    if (options.resumedFrom) {
      this.#newest = options.resumedFrom.newest;
      this.#position = options.resumedFrom.position;
      for (const entry of options.resumedFrom.delivered) this.#remember(entry.digest, entry.timestamp);
    }
  }

  /** Aborted once the stream wants no more records (ended, cut off, or its client left). */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** How this stream's connection is ended when its client stops reading, and how soon. */
  connect(connection: ConnectionOptions): void {
    this.#connection = connection;
  }

  /** Holds the poller's batches until `release`, so a catch-up read is delivered first. */
  hold(): void {
    this.#held ??= [];
  }

  /**
   * Queues the catch-up, then the batches held meanwhile: all of it is where this client starts
   * (see PendingRecords), so a client that keeps reading gets all of it, then the live records.
   * Resolves once the client has taken the catch-up (or the stream ended): the hub keeps only a
   * few catch-ups in memory at once.
   */
  release(catchUp: readonly LiveRecord[]): Promise<void> {
    const held = this.#held ?? [];
    this.#held = undefined;
    if (!this.#detached) {
      for (const record of catchUp) if (this.#accepts(record)) this.#pending.addCatchUp(record);
      for (const batch of held) this.#add(batch);
      this.#pending.startHere();
    }
    this.#flush();
    return this.#untilCaughtUp();
  }

  /**
   * Queues part of the catch-up, oldest first, while the poller's batches stay held: a catch-up
   * larger than a read may hold arrives in parts, the last through `release`. Resolves once the
   * client has taken it (or the stream ended), so that the next part is read only then.
   */
  releasePart(part: readonly LiveRecord[]): Promise<void> {
    if (!this.#detached) for (const record of part) if (this.#accepts(record)) this.#pending.addCatchUp(record);
    this.#flush();
    return this.#untilCaughtUp();
  }

  #untilCaughtUp(): Promise<void> {
    this.#caughtUp?.resolve();
    const caughtUp = withResolvers();
    this.#caughtUp = caughtUp;
    if (this.#detached) caughtUp.resolve();
    this.#checkCaughtUp();
    return caughtUp.promise;
  }

  /**
   * Queues the records this subscription has not delivered. A client that has fallen more than
   * `maxBuffered` records behind since the last batch is cut off (checked before this batch, so a
   * burst larger than that reaches a client that reads it in time).
   */
  offer(records: readonly LiveRecord[]): void {
    if (this.#detached) return;
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
    if (record.timestamp < this.floor) return false;
    // Stryker disable next-line ConditionalExpression: with no newest yet the comparison is with NaN, false as well
    if (this.#newest !== undefined && record.timestamp < this.#newest - this.#options.settleMs) return false;
    return !this.#delivered.has(record.digest) && !this.#pending.has(record.digest);
  }

  /** Ends the stream after the queued records with this error. */
  fail(error: GatewayError): void {
    this.#end(error);
  }

  /** Ends the stream after the queued records. */
  complete(): void {
    this.#end('complete');
  }

  #end(ending: GatewayError | 'complete'): void {
    this.#ending ??= ending;
    this.#detach();
    // A pause timed against the stall time is timed again against the shorter end grace.
    this.#stall.stop();
    this.#flush();
  }

  /**
   * Drops what waits and ends the stream with RATE_LIMITED; the client's slot is free at once.
   * The client has the end grace from now to take the error, and its connection is ended then if
   * it still holds unsent data, whether or not the error was taken.
   */
  #cutOff(): void {
    this.#pending.clear();
    this.#stall.pulled();
    setTimeout(() => this.#endConnectionIfUndrained(), this.#endGraceMs()).unref();
    this.fail(
      new GatewayError(
        'RATE_LIMITED',
        'The subscription was ended because the client did not keep up with the records it was sent.',
        { queued: this.#options.maxBuffered },
      ),
    );
  }

  /** No more records will be added: the hub frees the slot, a catch-up read stops. */
  #detach(): void {
    if (this.#detached) return;
    this.#detached = true;
    this.#held = undefined;
    this.#abort.abort();
    this.#caughtUp?.resolve();
    this.#options.onClose(this, this.#ending ?? 'client');
  }

  #checkCaughtUp(): void {
    if (this.#caughtUp && !this.#pending.catchingUp) this.#caughtUp.resolve();
  }

  /** How long the client may pause: only while something waits for it that it has not asked for. */
  #pauseAllowed(): number | undefined {
    if (this.#closed || this.#waiting) return undefined;
    if (this.#ending !== undefined) return this.#endGraceMs();
    return this.#pending.size > 0 ? (this.#connection.stallMs ?? DEFAULT_STALL_MS) : undefined;
  }

  #endGraceMs(): number {
    return this.#connection.endGraceMs ?? DEFAULT_END_GRACE_MS;
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
    this.#connection.endIfUndrained?.();
  }

  #remember(digest: string, timestamp: number): void {
    this.#delivered.set(digest, timestamp);
    this.#newestDelivered.add({ digest, timestamp });
  }

  #take(record: LiveRecord): LiveItem {
    this.#options.onDelivered?.();
    this.#remember(record.digest, record.timestamp);
    if (record.position !== undefined) this.#position = record.position;
    // Stryker disable next-line EqualityOperator: an equal time leaves the newest as it was
    if (this.#newest === undefined || record.timestamp > this.#newest) this.#newest = record.timestamp;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: how often the sweep runs only bounds memory (see #sweep)
    if (this.#delivered.size > this.#sweepAt) this.#sweep();
    this.#checkCaughtUp();
    return { record: record.record, resumeAfter: () => this.#token() };
  }

  /**
   * Forgets records older than the settle time before the newest: no re-read reaches them, and
   * #accepts refuses them by their time anyway, so forgetting fewer (or none) only costs memory.
   */
  // Stryker disable next-line BlockStatement: only memory, see above
  #sweep(): void {
    // Stryker disable next-line LogicalOperator: #newest is set before a sweep; a lower bound forgets less, only memory
    const bound = (this.#newest ?? 0) - this.#options.settleMs;
    // Stryker disable next-line ConditionalExpression: forgetting none only costs memory (forgetting all is caught)
    for (const [digest, timestamp] of this.#delivered) if (timestamp < bound) this.#delivered.delete(digest);
    // Stryker disable next-line MethodExpression,ArithmeticOperator: how often the sweep runs only bounds memory
    this.#sweepAt = Math.max(256, this.#delivered.size * 2);
  }

  #token(): string {
    const newest = this.#newest ?? this.floor;
    const bound = newest - this.#options.settleMs;
    const delivered = this.#newestDelivered.since(bound);
    return encodeResumeToken({
      filterKey: this.#options.filterKey,
      newest,
      floor: Math.max(this.floor, bound),
      issuedAt: this.#options.now(),
      delivered,
      position: this.#position,
    });
  }

  #flush(): void {
    const waiting = this.#waiting;
    if (waiting) {
      const next = this.#nextResult();
      if (!next) return;
      this.#waiting = undefined;
      this.#stall.pulled();
      waiting(next);
    }
    this.#stall.arm();
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
    this.#stall.stop();
    this.#pending.clear();
    this.#detach();
  }

  next(): Promise<IteratorResult<LiveItem>> {
    if (this.#closed) return Promise.resolve({ done: true, value: undefined });
    this.#stall.pulled();
    const ready = this.#nextResult();
    if (ready) {
      this.#stall.arm();
      return Promise.resolve(ready);
    }
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

function withResolvers(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}
