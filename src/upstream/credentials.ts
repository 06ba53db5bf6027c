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
  /** A valid credential, shared with every concurrent caller; rejects with an UpstreamError. */
  acquire(deadline: Deadline, log: Logger): Promise<CredentialLease>;
}

export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}
