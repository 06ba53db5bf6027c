/**
 * AuditEventConnection.totalCount: the number of records in the pinned window and filter.
 * The upstream has no count. A page that reached the window's end already knows it; otherwise
 * the end is found with one-row probes (window-end.ts) narrowed to the exact position. The probes
 * always start from the window's beginning, so the same window asks the same one-row pages: for a
 * closed window the audit page cache answers them all after the first count.
 */
import type { GatewayContext } from '../../context.js';
import { probeRound } from './read-range.js';
import type { AuditScope } from '../../../audit/paging/scope.js';
import { locateWindowEnd } from '../../../audit/paging/window-end.js';

/** What reading a page taught about the window's size. */
export type WindowSize = { readonly exact: number } | { readonly unknown: true };

export async function countWindow(
  context: GatewayContext,
  scope: AuditScope,
  size: WindowSize | Promise<WindowSize>,
): Promise<number> {
  const known = await size;
  if ('exact' in known) return known.exact;
  const end = await locateWindowEnd(probeRound(context, scope), -1, 0);
  return end.firstMissing;
}
