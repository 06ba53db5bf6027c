/** What the HTTP layer needs from a token or session manager. */
import type { Logger } from 'pino';
import type { Deadline } from './deadline.js';

export interface CredentialLease {
  /** Headers carrying the credential; never logged. */
  readonly headers: Readonly<Record<string, string>>;
  /** The upstream refused this credential: drop it, unless a newer one already replaced it. */
  invalidate(): void;
}

export interface CredentialSource {
  /**
   * A valid credential, shared with every concurrent caller; rejects with an UpstreamError, or with
   * the deadline's abort reason as soon as its signal aborts while the caller waits.
   */
  acquire(deadline: Deadline, log: Logger): Promise<CredentialLease>;
}

export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/**
 * One credential request in flight at a time: callers meanwhile wait for that same request and
 * share its outcome, a failure included; once it settles, the next caller starts a new one.
 */
export class SingleFlight<T> {
  #inflight: Promise<T> | undefined;

  /** Joins the request under way, or starts one with `start`. */
  join(start: () => Promise<T>): Promise<T> {
    this.#inflight ??= start().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }
}
