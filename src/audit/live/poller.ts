/**
 * One filter's poller: each poll reads from the settle time before the newest record it delivered (late records come in
 * it) up to now. With a shared feed the lease holder reads into the stream; every replica's window follows the stream.
 */
import type { Logger } from 'pino';
import { GatewayError, markLogged, UpstreamError } from '../../lib/errors.js';
import type { AuditRecord } from '../../upstream/identity/schemas.js';
import { SettleWindow, type LiveFilter, type LiveRecord } from './records.js';
import type { FeedRole, SharedFeed } from './shared-feed.js';
import type { LiveSubscriber } from './subscriber.js';
import { readWindow, type WindowPart, type WindowRead } from './window-read.js';

export interface PollerOptions extends Pick<WindowRead, 'identity' | 'budget' | 'pageSize'> {
  readonly log: Logger;
  readonly pollMs: number;
  readonly settleMs: number;
  readonly giveUpMs: number;
  readonly now: () => number;
  readonly onStop: (poller: FilterPoller) => void;
  /** Unset: this process polls for itself. */
  readonly feed?: SharedFeed | undefined;
}

export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new UpstreamError('UPSTREAM_UNAVAILABLE', 'identity', 'The identity service could not be read.', {
    cause: error instanceof Error ? error.message : String(error),
  });
}

/** Reads are retried until they have failed for `giveUpMs` in a row (README: AUDIT_LIVE_GIVE_UP_MS). */
export class FailingReads {
  #since: number | undefined;

  constructor(
    readonly giveUpMs: number,
    readonly now: () => number,
  ) {}

  succeeded(): void {
    this.#since = undefined;
  }

  failed(error: unknown, readAt: number): { failure: GatewayError; giveUp: boolean } {
    this.#since ??= readAt;
    return { failure: asGatewayError(error), giveUp: this.now() - this.#since >= this.giveUpMs };
  }
}

const NOTHING_TO_READ: WindowPart = { records: [], complete: true, release: () => {} };

export class FilterPoller {
  readonly filter: LiveFilter;
  readonly feed: SharedFeed | undefined;
  readonly #options: PollerOptions;
  readonly #subscribers = new Set<LiveSubscriber>();
  /** By uuid; its floor is the oldest time any subscriber may be given, lowered by catch-up subscribers. */
  readonly #window: SettleWindow;
  #timer: NodeJS.Timeout | undefined;
  readonly #stop = new AbortController();
  readonly #reads: FailingReads;
  #polling = false;
  /** The next poll is due at once: the lease was taken while a poll was under way. */
  #pollAgain = false;
  #role: FeedRole | undefined;
  readonly #known = (record: AuditRecord) => this.#window.has(record.uuid);
  polls = 0;

  constructor(filter: LiveFilter, floor: number, options: PollerOptions) {
    this.filter = filter;
    this.feed = options.feed;
    this.#window = new SettleWindow(floor, options.settleMs);
    this.#options = options;
    this.#reads = new FailingReads(options.giveUpMs, options.now);
    // From now: what a catch-up subscriber needs from before is read by its catch-up.
    this.feed?.follow(options.now() - options.settleMs, (records) => this.#publish(records), () => this.#pollNow());
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  add(subscriber: LiveSubscriber): void {
    this.#window.floor = Math.min(this.#window.floor, subscriber.floor);
    this.#subscribers.add(subscriber);
    if (this.#timer === undefined && !this.#stop.signal.aborted) this.#schedule();
  }

  remove(subscriber: LiveSubscriber): void {
    if (this.#subscribers.delete(subscriber) && this.#subscribers.size === 0) this.stop();
  }

  stop(): void {
    if (this.#stop.signal.aborted) return;
    this.#stop.abort();
    clearTimeout(this.#timer);
    this.feed?.stop();
    this.#options.onStop(this);
  }

  #schedule(): void {
    this.#timer = setTimeout(() => void this.#poll(), this.#pollAgain ? 0 : this.#options.pollMs);
    this.#pollAgain = false;
  }

  /** This replica took the filter's lease between polls: it reads for every replica from now on. */
  #pollNow(): void {
    if (this.#stop.signal.aborted) return;
    if (this.#polling) {
      this.#pollAgain = true;
      return;
    }
    clearTimeout(this.#timer);
    void this.#poll();
  }

  async #poll(): Promise<void> {
    this.#polling = true;
    try {
      const role = await this.#takeRole();
      if (this.#stop.signal.aborted) return;
      // The holder reads for this replica: its records come through the stream.
      if (role === 'follower') {
        this.#reads.succeeded();
        this.#schedule();
        return;
      }
      const { now, log } = this.#options;
      const fromMillis = this.#window.start;
      const toMillis = now();
      this.polls++;
      try {
        const window = { ...this.#options, filter: this.filter, fromMillis, toMillis, known: this.#known, signal: this.#stop.signal };
        const part = fromMillis > toMillis ? NOTHING_TO_READ : await readWindow(window);
        try {
          if (this.#stop.signal.aborted) return;
          this.#reads.succeeded();
          await this.#deliver(role, part.records);
        } finally {
          part.release();
        }
      } catch (error) {
        if (this.#stop.signal.aborted) return;
        const { failure, giveUp } = this.#reads.failed(error, toMillis);
        if (giveUp) {
          // As designed (README: AUDIT_LIVE_GIVE_UP_MS): one warn line; the streams' error is not logged again.
          log.warn({ code: failure.code, filter: this.filter, detail: failure.detail }, 'live audit poller gave up: upstream failing');
          markLogged(failure);
          for (const subscriber of [...this.#subscribers]) subscriber.end(failure);
          this.stop();
          return;
        }
        log.warn({ code: failure.code, filter: this.filter, detail: failure.detail }, 'live audit poll failed; retrying');
      }
      if (!this.#stop.signal.aborted) this.#schedule();
    } finally {
      this.#polling = false;
    }
  }

  async #takeRole(): Promise<FeedRole> {
    if (!this.feed) return 'local';
    const role = await this.feed.role();
    // Back from polling alone: the stream gets the whole window (each subscriber knows its own).
    if (role === 'holder' && this.#role === 'local') this.#window.forgetKeys();
    this.#role = role;
    return role;
  }

  /** A poll's records: to the stream when this replica holds the filter's lease, else to its subscribers. */
  async #deliver(role: FeedRole, records: readonly LiveRecord[]): Promise<void> {
    if (role !== 'holder' || records.length === 0) {
      this.#publish(records);
      return;
    }
    const appended = await this.feed!.append(records);
    if (this.#stop.signal.aborted) return;
    // Known once appended, so the next poll does not append them again before the stream brings them back.
    if (appended === 'appended') this.#note(records);
    // Redis went away mid-append: delivered here (what did reach the stream is known by uuid).
    else if (appended === 'unavailable') this.#publish(records);
    // Fenced: the new holder reads the window on from the stream, these included.
  }

  /** Delivers records new to this poller: a read leaves out what it has seen, the stream brings each once. */
  #publish(records: readonly LiveRecord[]): void {
    this.#note(records);
    if (records.length === 0) return;
    for (const subscriber of this.#subscribers) subscriber.offer(records);
  }

  #note(records: readonly LiveRecord[]): void {
    for (const record of records) this.#window.note(record.uuid, record.timestamp);
  }
}
