/** What every cursor of one auditEvents connection shares, and how it becomes an upstream query. */
import type { AuditReportQuery } from '../../upstream/types.js';
import type { UpstreamAction } from '../../upstream/identity/actions.js';

/** The filter and the time window pinned when the connection's first page was read. */
export interface AuditScope {
  /** Inclusive bounds in epoch ms, as the upstream's fromMillis/toMillis. */
  readonly fromMillis: number;
  readonly toMillis: number;
  /** When the first page was read: `to` defaults to it and is capped at it, so later events stay out. */
  readonly pinnedAt: number;
  readonly objectType: string | null;
  readonly action: UpstreamAction | null;
}

export function sameScope(a: AuditScope, b: AuditScope): boolean {
  return (
    a.fromMillis === b.fromMillis &&
    a.toMillis === b.toMillis &&
    a.pinnedAt === b.pinnedAt &&
    a.objectType === b.objectType &&
    a.action === b.action
  );
}

/** One audit report call over the scope's window; positions count from 0 (the newest record). */
export function reportQuery(scope: AuditScope, startIndex: number, pageSize: number): AuditReportQuery {
  return {
    fromMillis: scope.fromMillis,
    toMillis: scope.toMillis,
    objectType: scope.objectType ?? undefined,
    action: scope.action ?? undefined,
    startIndex,
    pageSize,
  };
}
