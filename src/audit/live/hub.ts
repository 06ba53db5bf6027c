/** Live audit subscriptions: argument checks, limits, one poller per filter, the catch-up of `since`/`resumeAfter`. */
import { setTimeout as sleep } from 'node:timers/promises';
import { BadUserInputError, GatewayError, markLogged, UpstreamError } from '../../lib/errors.js';
import { Turns } from '../../lib/turns.js';
import { createOperationDeadline } from '../../upstream/deadline.js';
import type { AuditRecord } from '../../upstream/identity/schemas.js';
import type { SharedStore } from '../../upstream/shared-store/store.js';
import { emit, UPSTREAM_ACTIONS, type IdentityApi } from '../../upstream/types.js';
import { FailingReads, FilterPoller, type PollerOptions } from './poller.js';
import { digestOf, filterKey, filterOfKey, type LiveFilter } from './records.js';
import { decodeResumeToken, malformedToken, TOKEN_VALIDITY_MS, type ResumePoint } from './resume-token.js';
import { SharedFeed } from './shared-feed.js';
import { LiveSubscriber, type LiveEndReason, type LiveItem, type SubscriberOptions } from './subscriber.js';
import { DEFAULT_LIVE_READ_BYTES, ReadBudget, readWindow } from './window-read.js';

/** Hooks for metrics, as upstream calls have theirs (src/upstream/types.ts); one that throws is ignored. */
export interface LiveAuditEvents {
  onRecordDelivered?(): void;
  onSubscriptionEnd?(reason: LiveEndReason): void;
}

export interface LiveAuditOptions
  extends Pick<PollerOptions, 'log' | 'pollMs' | 'settleMs' | 'giveUpMs' | 'pageSize'>,
    Pick<SubscriberOptions, 'stallMs' | 'endGraceMs'> {
  readonly identity: IdentityApi | undefined;
  readonly maxSubscriptions: number;
  readonly maxSubscriptionsPerCaller?: number | undefined;
  /** Distinct filters polled at once: each costs the upstream one call per poll interval. */
  readonly maxFilters: number;
  readonly maxBuffered?: number;
  /** Deadline of each catch-up read, as of a query; the live stream itself has none. */
  readonly catchUpTimeoutMs?: number;
  readonly maxReadBytes?: number;
  readonly now?: () => number;
  readonly events?: LiveAuditEvents | undefined;
  /** Replicas sharing Redis: one poller per filter for all of them. */
  readonly shared?: { readonly store: SharedStore; readonly leaseMs: number } | undefined;
}

export interface LiveSubscribeArgs {
  readonly filter?: { readonly objectType?: string | null; readonly action?: string | null } | null | undefined;
  readonly since?: Date | null | undefined;
  readonly resumeAfter?: string | null | undefined;
  readonly callerId?: string | undefined;
}

export type LiveAuditStats = ReturnType<LiveAudit['stats']>;

const MAX_OBJECT_TYPE_CHARS = 256;
/** `since` reaches as far back as a resume token, give or take the time a client's "15 minutes ago" takes to arrive. */
const SINCE_REACH_MS = TOKEN_VALIDITY_MS + 1000;
const DEFAULT_MAX_BUFFERED = 1000;
/** Catch-ups under way at once: each calls the upstream and holds its records until its client has them. */
export const CATCH_UP_TURNS = 4;
/** A client slow to take its replay passes the turn on after this long, and reads on. */
const CATCH_UP_TURN_MS = 30_000;
const CATCH_UP_READ_TIMEOUT_MS = 30_000;

const rateLimited = (name: string, message: string, limit: number): GatewayError =>
  Object.assign(new GatewayError('RATE_LIMITED', message, { limit }), { name });

/** Why a filter is refused, or undefined: the arguments' filter and a token's go through it alike. */
function filterProblem(filter: LiveFilter): string | undefined {
  if (filter.objectType !== undefined && (filter.objectType.length === 0 || filter.objectType.length > MAX_OBJECT_TYPE_CHARS)) {
    return `filter.objectType must be 1 to ${MAX_OBJECT_TYPE_CHARS} characters.`;
  }
  if (filter.action !== undefined && !(UPSTREAM_ACTIONS as readonly string[]).includes(filter.action)) {
    return `filter.action must be one of ${UPSTREAM_ACTIONS.join(', ')}.`;
  }
  return undefined;
}

export class LiveAudit {
  readonly #options: LiveAuditOptions & { now: () => number };
  readonly #pollers = new Map<string, FilterPoller>();
  readonly #subscribers = new Set<LiveSubscriber>();
  readonly #byCaller = new Map<string, number>();
  readonly #catchUpTurns = new Turns(CATCH_UP_TURNS);
  readonly #readBudget: ReadBudget;
  #closed = false;
  #started = 0;

  constructor(options: LiveAuditOptions) {
    this.#options = { ...options, now: options.now ?? Date.now };
    this.#readBudget = new ReadBudget(options.maxReadBytes ?? DEFAULT_LIVE_READ_BYTES);
  }

  subscribe(args: LiveSubscribeArgs, endIfUndrained?: () => void): AsyncIterableIterator<LiveItem> {
    const { now, maxSubscriptions, maxFilters, identity } = this.#options;
    if (!identity) throw new UpstreamError('UPSTREAM_NOT_CONFIGURED', 'identity', 'The identity service is not configured.');
    const start = now();
    const { key, filter, resume } = this.#checkArgs(args, start);
    if (this.#closed) return (async function* closed() {})();
    if (this.#subscribers.size >= maxSubscriptions) {
      const message = `This gateway serves at most ${maxSubscriptions} live subscriptions at once; try again later.`;
      throw rateLimited('RateLimitedError', message, maxSubscriptions);
    }
    const callerId = args.callerId ?? 'anonymous';
    const callerHolds = this.#byCaller.get(callerId) ?? 0;
    const perCaller = this.#options.maxSubscriptionsPerCaller ?? Infinity;
    if (callerHolds >= perCaller) {
      const message = `A caller may hold at most ${perCaller} live subscriptions at once; end one, or try again later.`;
      throw rateLimited('CallerRateLimitedError', message, perCaller);
    }
    if (!this.#pollers.has(key) && this.#pollers.size >= maxFilters) {
      const message = `This gateway polls at most ${maxFilters} distinct filters at once; subscribe with a filter already in use, or try again later.`;
      throw rateLimited('GatewayError', message, maxFilters);
    }

    const since = args.since?.getTime();
    const floor = resume ? resume.floor : (since ?? start);
    const subscriber = new LiveSubscriber({
      ...this.#options,
      filterKey: key,
      floor,
      maxBuffered: this.#options.maxBuffered ?? DEFAULT_MAX_BUFFERED,
      onClose: (closed, reason) => {
        this.#remove(closed, key, callerId);
        emit(this.#options.events?.onSubscriptionEnd, reason);
      },
      onDelivered: () => emit(this.#options.events?.onRecordDelivered, undefined),
      resumedFrom: resume,
      endIfUndrained,
    });
    this.#subscribers.add(subscriber);
    this.#byCaller.set(callerId, callerHolds + 1);
    this.#started++;
    const catchUp = since !== undefined || resume !== undefined;
    if (catchUp) subscriber.hold();
    const poller = this.#pollerFor(key, filter, floor);
    poller.add(subscriber);
    if (catchUp) void this.#catchUp(subscriber, poller, resume?.position);
    return subscriber;
  }

  #checkArgs(args: LiveSubscribeArgs, now: number): { key: string; filter: LiveFilter; resume?: ResumePoint } {
    const given: LiveFilter = { objectType: args.filter?.objectType ?? undefined, action: args.filter?.action ?? undefined };
    const problem = filterProblem(given);
    if (problem) throw new BadUserInputError(problem);
    const { since } = args;
    const resumeAfter = args.resumeAfter ?? undefined;
    if (since && resumeAfter !== undefined) throw new BadUserInputError('Give either `since` or `resumeAfter`, not both.');
    if (since && since.getTime() < now - SINCE_REACH_MS) {
      throw new BadUserInputError('`since` may be at most 15 minutes back.');
    }
    if (resumeAfter === undefined) return { key: filterKey(given), filter: given };
    const resume = decodeResumeToken(resumeAfter, now);
    const resumed = filterOfKey(resume.filterKey)!;
    // Anyone can write a token: its filter gets the arguments' checks, and its floor reaches back no
    // further than `since` could when it was issued, plus the settle time a resume re-reads.
    const reachMs = SINCE_REACH_MS + this.#options.settleMs;
    if (filterProblem(resumed) !== undefined || resume.floor < resume.issuedAt - reachMs) throw malformedToken();
    if (args.filter != null && resume.filterKey !== filterKey(given)) {
      throw new BadUserInputError('resumeAfter was issued for another filter; give the same filter or none.');
    }
    return { key: resume.filterKey, filter: resumed, resume };
  }

  #pollerFor(key: string, filter: LiveFilter, floor: number): FilterPoller {
    const existing = this.#pollers.get(key);
    if (existing) return existing;
    const { shared, settleMs, now } = this.#options;
    const log = this.#options.log.child({ component: 'live-audit' });
    const poller = new FilterPoller(filter, floor, {
      ...this.#options,
      identity: this.#options.identity!,
      log,
      budget: this.#readBudget,
      feed: shared && new SharedFeed(key, { ...shared, horizonMs: TOKEN_VALIDITY_MS + 2 * settleMs, log, now }),
      onStop: () => this.#pollers.delete(key),
    });
    this.#pollers.set(key, poller);
    return poller;
  }

  /** Catches a resume up from the filter's stream, part by part; false when the stream cannot give all it needs. */
  async #catchUpFromStream(feed: SharedFeed, position: string, subscriber: LiveSubscriber): Promise<boolean> {
    try {
      for await (const part of feed.after(position)) {
        if (subscriber.signal.aborted) return true;
        await subscriber.release(part, false);
      }
    } catch {
      // A gap in the stream, or Redis failing: the upstream holds every record, and what came twice is known.
      return subscriber.signal.aborted;
    }
    void subscriber.release([]);
    return true;
  }

  /** Reads from the floor up to now, retried like a poll, in parts a read may hold; then lets the live records through. */
  async #catchUp(subscriber: LiveSubscriber, poller: FilterPoller, position: string | undefined) {
    const { feed, filter } = poller;
    if (feed && position !== undefined && (await this.#catchUpFromStream(feed, position, subscriber))) return;
    const { now, log, pollMs, giveUpMs, identity } = this.#options;
    const { signal } = subscriber;
    const reads = new FailingReads(giveUpMs, now);
    let from = subscriber.floor;
    // The next part reads again the instant the last one ended at.
    const known = (record: AuditRecord) => record.timestamp === from && subscriber.knows(digestOf(record.uuid));
    const window = { ...this.#options, identity: identity!, budget: this.#readBudget, filter, known };
    while (!signal.aborted) {
      const giveBack = await this.#catchUpTurns.take(signal);
      if (!giveBack) return;
      const readAt = now();
      let taken: Promise<void> | undefined;
      const deadline = createOperationDeadline(this.#options.catchUpTimeoutMs ?? CATCH_UP_READ_TIMEOUT_MS, signal);
      try {
        const read = { ...window, fromMillis: from, toMillis: readAt, signal: deadline.signal, expiresAt: deadline.expiresAt };
        const part = await readWindow(read).finally(() => deadline.dispose());
        reads.succeeded();
        taken = subscriber.release(part.records, part.complete);
        part.release();
        // Not empty: a read that keeps nothing of an unfinished window fails instead.
        if (!part.complete) from = part.records.at(-1)!.timestamp;
        await Promise.race([taken, sleep(CATCH_UP_TURN_MS, undefined, { ref: false })]);
        if (part.complete) return;
      } catch (error) {
        if (signal.aborted) return;
        const { failure, giveUp } = reads.failed(error, readAt);
        if (giveUp) {
          // As designed (README: AUDIT_LIVE_GIVE_UP_MS): one warn line; the stream's error is not logged again.
          log.warn({ code: failure.code, filter }, 'live audit catch-up gave up: upstream failing');
          void subscriber.release([]);
          subscriber.end(markLogged(failure));
          return;
        }
        log.warn({ code: failure.code, filter }, 'live audit catch-up read failed; retrying');
      } finally {
        giveBack();
      }
      // The next part is read once the client has this one: a catch-up queues one part at a time.
      if (taken) await taken;
      else await sleep(pollMs, undefined, { signal }).catch(() => undefined);
    }
  }

  #remove(subscriber: LiveSubscriber, key: string, callerId: string): void {
    this.#subscribers.delete(subscriber);
    const holds = this.#byCaller.get(callerId)! - 1;
    if (holds > 0) this.#byCaller.set(callerId, holds);
    else this.#byCaller.delete(callerId);
    this.#pollers.get(key)?.remove(subscriber);
  }

  stats() {
    return {
      subscriptions: this.#subscribers.size,
      started: this.#started,
      pollers: [...this.#pollers.values()].map((p) => ({ filter: p.filter, subscribers: p.subscriberCount, polls: p.polls })),
    };
  }

  /** Ends every stream cleanly; each poller stops with its last subscriber. */
  close(): void {
    this.#closed = true;
    for (const subscriber of [...this.#subscribers]) subscriber.end();
  }
}
