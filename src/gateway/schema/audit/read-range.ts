/**
 * Reads runs of window positions through the request's audit report loader. A run longer than
 * the upstream's largest page is split into calls that are all issued at once (the dataloader
 * batches them into one tick), so a 5001-row read costs one round trip, not two.
 */
import type { GatewayContext } from '../../context.js';
import type { AuditRowResult } from '../../../upstream/types.js';
import { UPSTREAM_MAX_PAGE_SIZE } from '../../../audit/paging/limits.js';
import { reportQuery, type AuditScope } from '../../../audit/paging/scope.js';
import type { ProbeRound } from '../../../audit/paging/window-end.js';

/** Rows at positions start, start+1, ...; fewer than `count` when the window ends first. */
export async function readRange(
  context: GatewayContext,
  scope: AuditScope,
  start: number,
  count: number,
): Promise<readonly AuditRowResult[]> {
  const calls: Promise<readonly AuditRowResult[]>[] = [];
  const sizes: number[] = [];
  for (let offset = start; offset < start + count; offset += UPSTREAM_MAX_PAGE_SIZE) {
    const pageSize = Math.min(UPSTREAM_MAX_PAGE_SIZE, start + count - offset);
    sizes.push(pageSize);
    calls.push(context.loaders.auditReport.load(reportQuery(scope, offset, pageSize)).then((page) => page.rows));
  }
  const pages = await Promise.all(calls);
  const rows: AuditRowResult[] = [];
  for (let i = 0; i < pages.length; i++) {
    // Never longer than asked: the identity client refuses such a page.
    const page = pages[i]!;
    for (const row of page) rows.push(row);
    // A short page is the window's end; whatever later calls say cannot be contiguous.
    if (page.length < sizes[i]!) break;
  }
  return rows;
}

/** One-row reads: the probes of window-end.ts. */
export function probeRound(context: GatewayContext, scope: AuditScope): ProbeRound {
  return (positions) =>
    Promise.all(
      positions.map((position) =>
        context.loaders.auditReport.load(reportQuery(scope, position, 1)).then((page) => page.rows.length > 0),
      ),
    );
}
