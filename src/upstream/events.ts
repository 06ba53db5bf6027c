/** Hooks a metrics or tracing layer subscribes to; one that throws is ignored. */
import type { ErrorCode, UpstreamService } from '../lib/errors.js';

export interface UpstreamCallEvent {
  readonly service: UpstreamService;
  /** A stable label, not a URL: 'token', 'audit-report', 'session', 'update-session-files'. */
  readonly route: string;
  readonly method: string;
  /** The last HTTP status seen; undefined when no answer came (connection, deadline). */
  readonly status: number | undefined;
  readonly durationMs: number;
  /** Transient retries (connection, 429, 502-504); the credential retry is counted apart. */
  readonly retries: number;
  readonly credentialRetry: boolean;
  /** cancelled: the caller went away (no upstream failure, see CallerGoneError). */
  readonly outcome: 'success' | 'cancelled' | ErrorCode;
}

export interface CredentialRenewalEvent {
  readonly service: UpstreamService;
  readonly kind: 'client_credentials' | 'refresh_token' | 'session_login';
  readonly outcome: 'success' | ErrorCode;
  readonly durationMs: number;
}

export interface CacheLookupEvent {
  /** A stable label: 'audit-report'. */
  readonly cache: string;
  /** hit: no upstream call of its own (stored, or joined one in flight); bypass: the window is still open. */
  readonly outcome: 'hit' | 'miss' | 'bypass';
}

/** An answer the gateway stopped reading because the answer bytes in flight were at their bound. */
export interface AnswerRefusedEvent {
  readonly service: UpstreamService;
  readonly route: string;
  readonly reason: 'bytes_in_flight';
}

export interface UpstreamEvents {
  onUpstreamCall?(event: UpstreamCallEvent): void;
  onCredentialRenewal?(event: CredentialRenewalEvent): void;
  onCacheLookup?(event: CacheLookupEvent): void;
  onAnswerRefused?(event: AnswerRefusedEvent): void;
}

/** Where an upstream call starts: stable labels only, nothing a caller sent. */
export type UpstreamCallStart = Pick<UpstreamCallEvent, 'service' | 'route' | 'method'>;

/** Wraps each upstream call (e.g. in an active span): runs `call` once, its outcome unchanged; `end` says how it ended. */
export interface UpstreamTracer {
  traceCall<T>(start: UpstreamCallStart, call: (end: (event: UpstreamCallEvent) => void) => Promise<T>): Promise<T>;
}

export function emit<E>(hook: ((event: E) => void) | undefined, event: E): void {
  try {
    hook?.(event);
  } catch {
    // Observing must never break a call.
  }
}
