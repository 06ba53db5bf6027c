/**
 * Which window positions a page reads. Pure: no I/O, so it is easy to reason about and test.
 *
 * A page is a run of positions [start, end). hasPreviousPage is `start > 0` (position 0 is the
 * newest record of the window). hasNextPage is whether a record exists at `end`, learned for free
 * by reading one row more in the same (parallel) upstream calls.
 */
import { MAX_PAGE_SIZE } from './paging-limits.js';
import type { PageRequest } from './page-request.js';

export type PagePlan =
  /** Read [start, end]: the page is [start, end), the row at `end` only tells hasNextPage. */
  | { readonly kind: 'slice'; readonly start: number; readonly end: number }
  /**
   * The last `size` positions at or after `lo` (`last` without `before`): the window's end is
   * unknown and is located first (see window-end.ts). `knownRow` is a position known to exist.
   */
  | { readonly kind: 'tail'; readonly lo: number; readonly size: number; readonly knownRow: number };

export function planPage({ lo, hi, direction, size }: PageRequest): PagePlan {
  if (direction === 'forward') {
    return { kind: 'slice', start: lo, end: hi === undefined ? lo + size : Math.min(lo + size, hi) };
  }
  if (hi !== undefined) return { kind: 'slice', start: Math.max(lo, hi - size), end: hi };
  // An `after` cursor names a record that exists: the search for the end can start past it.
  return { kind: 'tail', lo, size, knownRow: lo - 1 };
}

/**
 * How close the window-end search must get before the tail is read in one go: reading a few rows
 * more than the page is cheaper than another probe round, while the read stays within one call.
 */
export function tailSlack(size: number): number {
  return Math.max(32, Math.min(size, MAX_PAGE_SIZE - size));
}
