/** What the upstream layer offers the rest of the gateway (typed calls, no GraphQL), and the hooks it reports to. */
import type { Logger } from 'pino';
import type { ErrorCode, UpstreamService } from '../lib/errors.js';
import type { FileInfo } from './content-library/schemas.js';
import type { AuditRecord } from './identity/schemas.js';

/** The request's logger (with its request id); its signal aborts when its deadline passes or its caller leaves. */
export interface CallOptions {
  readonly log: Logger;
  readonly signal?: AbortSignal;
  /** The deadline, on performance.now()'s clock. */
  readonly expiresAt?: number;
}

/** The audit report's action filter values, in the upstream's own spelling (spec 4.2). */
export const UPSTREAM_ACTIONS = ['Create', 'Update', 'Delete', 'Link', 'Unlink'] as const;
export type UpstreamAction = (typeof UPSTREAM_ACTIONS)[number];

/** One audit report request, in the upstream's own terms (spec 4.2). */
export interface AuditReportQuery {
  readonly fromMillis: number;
  readonly toMillis: number;
  /** Case-sensitive; undefined: every type. */
  readonly objectType?: string | undefined;
  readonly action?: string | undefined;
  readonly pageSize: number;
  readonly startIndex: number;
}

/** A row whose record could not be read is kept in place, so offsets stay right. */
export type AuditRowResult =
  | { readonly ok: true; readonly record: AuditRecord }
  | { readonly ok: false; readonly reason: string };

export interface AuditReportPage {
  /** Newest first; never more than pageSize, and fewer means the last page. */
  readonly rows: readonly AuditRowResult[];
}

export interface IdentityApi {
  auditReport(query: AuditReportQuery, call: CallOptions): Promise<AuditReportPage>;
}

/** A file that does not match its shape is kept in place as unreadable, so positions stay right. */
export type UpdateSessionFileRow = { readonly ok: true; readonly file: FileInfo } | { readonly ok: false };

export interface ContentLibraryApi {
  /** Rejects with UpstreamError NOT_FOUND when the session does not exist. */
  listUpdateSessionFiles(updateSessionId: string, call: CallOptions): Promise<readonly UpdateSessionFileRow[]>;
}

/** The configured upstreams; undefined when that upstream has no URL (UPSTREAM_NOT_CONFIGURED). */
export interface Upstreams {
  readonly identity: IdentityApi | undefined;
  readonly contentLibrary: ContentLibraryApi | undefined;
  close(): Promise<void>;
}

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
