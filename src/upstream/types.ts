/** What the upstream layer offers the rest of the gateway: typed calls, typed errors, no GraphQL. */
import type { Logger } from 'pino';
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
  /** Upstream spelling (UPSTREAM_ACTIONS). */
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
