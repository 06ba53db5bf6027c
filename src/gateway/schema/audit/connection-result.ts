/** What an auditEvents page resolves to, before its fields are read. */
import type { PageInfoShape } from '@pothos/plugin-relay';
import type { AuditEdge } from '../../../audit/paging/edge.js';
import type { AuditScope } from '../../../audit/paging/scope.js';
import type { WindowSize } from './total-count.js';

export interface AuditWindowShape {
  readonly from: number;
  readonly to: number;
}

export interface AuditConnectionResult {
  readonly edges: AuditEdge[];
  readonly pageInfo: PageInfoShape;
  readonly window: AuditWindowShape;
  /** For totalCount, counted only when selected. */
  readonly scope: AuditScope;
  readonly size: WindowSize | Promise<WindowSize>;
}

export interface UnreadableRow {
  readonly position: number;
  readonly reason: string;
}
