/** What the token and session managers share, and the lease the HTTP layer sends. */
import type { Logger } from 'pino';
import { UpstreamError, type UpstreamService } from '../lib/errors.js';
import { untilAborted, type Deadline } from './deadline.js';
import { emit, type CredentialRenewalEvent, type UpstreamEvents } from './types.js';

export interface CredentialLease {
  /** Headers carrying the credential; never logged. */
  readonly headers: Readonly<Record<string, string>>;
  /** The upstream refused this credential: drop it, unless a newer one already replaced it. */
  invalidate(): void;
}

export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** One credential shared by every caller, and one request for a new one in flight at a time, its outcome shared. */
export abstract class SharedCredential<T extends object | string> {
  protected current: T | undefined;
  #renewal: Promise<T> | undefined;

  /** Requests a new credential; not tied to any caller's signal, as others may be waiting for it. */
  protected abstract obtain(log: Logger): Promise<T>;
  protected abstract headers(credential: T): Record<string, string>;

  /** A valid credential, shared with every concurrent caller; rejects as soon as the deadline's signal aborts. */
  async acquire(deadline: Deadline, log: Logger): Promise<CredentialLease> {
    const credential = await this.valid(deadline, log);
    return {
      headers: this.headers(credential),
      invalidate: () => {
        if (this.current === credential) this.current = undefined;
      },
    };
  }

  protected valid(deadline: Deadline, log: Logger): T | Promise<T> {
    return this.current ?? untilAborted(this.renew(log), deadline.signal);
  }

  protected renew(log: Logger): Promise<T> {
    this.#renewal ??= this.obtain(log).finally(() => {
      this.#renewal = undefined;
    });
    return this.#renewal;
  }
}

/** Runs one credential request, reporting how it ended and counting it in `stats.failures` when it fails. */
export async function reportedRenewal<T>(
  events: UpstreamEvents | undefined,
  renewal: { readonly service: UpstreamService; readonly kind: CredentialRenewalEvent['kind'] },
  stats: { failures: number },
  request: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const report = (outcome: CredentialRenewalEvent['outcome']) =>
    emit(events?.onCredentialRenewal, { ...renewal, outcome, durationMs: Math.round(performance.now() - started) });
  try {
    const value = await request();
    report('success');
    return value;
  } catch (error) {
    stats.failures++;
    report(error instanceof UpstreamError ? error.code : 'UPSTREAM_UNAVAILABLE');
    throw error;
  }
}
