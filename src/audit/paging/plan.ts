/**
 * Which window positions a page reads, shaped like Pothos' `offsetForArgs`: the checked arguments
 * and cursors become an offset and a limit to read, and what the rows read make of the page.
 * Pure: no I/O, so it is easy to reason about and test.
 *
 * Position 0 is the newest record of the window; hasPreviousPage is `start > 0`. hasNextPage is
 * learned for free by reading one row past the page in the same (parallel) upstream calls.
 */
import { MAX_PAGE_SIZE } from './limits.js';
import type { PageRequest } from './page-request.js';
import type { WindowEnd } from './window-end.js';

/** The page the rows read make: positions [start, start + count). */
export interface PageSpan {
  readonly start: number;
  readonly count: number;
  readonly hasNextPage: boolean;
  /** The window's size, when the read reached its end. */
  readonly windowSize?: number;
}

/** Read `limit` rows from `offset` (none when 0), then ask `pageFor` what they make. */
export interface ReadPlan {
  readonly needsProbe: false;
  readonly offset: number;
  readonly limit: number;
  /** Rows the page shows at most. */
  readonly size: number;
  /** Rows known to exist from `offset`: a read returning fewer contradicts what was seen before. */
  readonly minRows: number;
  readonly pageFor: (rowsRead: number) => PageSpan;
}

/**
 * `last` without `before`: the page ends at the window's end, which the upstream never tells.
 * Probes locate it first (see window-end.ts), starting past `knownRow`, a position known to exist,
 * and stopping `slack` positions short; `afterProbe` then says what to read.
 */
export interface ProbePlan {
  readonly needsProbe: true;
  /** First position the page may use. */
  readonly offset: number;
  readonly size: number;
  readonly knownRow: number;
  readonly slack: number;
  readonly afterProbe: (end: WindowEnd) => ReadPlan;
}

export type PagePlan = ReadPlan | ProbePlan;

export function planPage({ lo, hi, direction, size }: PageRequest): PagePlan {
  if (size === 0) return emptyPage(lo, hi, direction);
  if (direction === 'forward') return slice(lo, hi === undefined ? lo + size : Math.min(lo + size, hi));
  if (hi !== undefined) return slice(Math.max(lo, hi - size), hi);
  return tail(lo, size);
}

/** Positions [start, end) and the one row at `end` that only tells hasNextPage. */
function slice(start: number, end: number): ReadPlan {
  const size = end - start;
  return {
    needsProbe: false,
    offset: start,
    limit: size + 1,
    size,
    minRows: 0,
    pageFor: (rowsRead) => {
      // Fewer rows than asked: the window ends right after them (when it reaches `start` at all).
      const reachedEnd = rowsRead <= size && (rowsRead > 0 || start === 0);
      return {
        start,
        count: Math.min(size, rowsRead),
        hasNextPage: rowsRead > size,
        ...(reachedEnd ? { windowSize: start + rowsRead } : {}),
      };
    },
  };
}

/**
 * `first: 0` / `last: 0` never search for the window's end. A `before` cursor names a record that
 * follows, so nothing is read; otherwise one one-row read (shared by aliases of the same window)
 * says whether a record sits where the empty page is, which keeps hasNextPage / hasPreviousPage exact.
 */
function emptyPage(lo: number, hi: number | undefined, direction: PageRequest['direction']): ReadPlan {
  const read = { needsProbe: false, size: 0, minRows: 0 } as const;
  if (hi !== undefined) {
    const start = direction === 'backward' ? hi : lo;
    return { ...read, offset: start, limit: 0, pageFor: () => ({ start, count: 0, hasNextPage: true }) };
  }
  return {
    ...read,
    offset: lo,
    limit: 1,
    pageFor: (rowAtLo) =>
      direction === 'forward'
        ? { start: lo, count: 0, hasNextPage: rowAtLo > 0 }
        : // A backward page without `before` sits at the window's end: past the row at `lo`, if any.
          { start: lo + rowAtLo, count: 0, hasNextPage: false },
  };
}

function tail(lo: number, size: number): ProbePlan {
  return {
    needsProbe: true,
    offset: lo,
    size,
    // An `after` cursor names a record that exists: the search for the end can start past it.
    knownRow: lo - 1,
    slack: tailSlack(size),
    afterProbe: ({ lastPresent, firstMissing }) => {
      // The window has between lastPresent+1 and firstMissing rows: read from the earliest position
      // the page could start at up to firstMissing, and the rows returned say where it really ends.
      const readFrom = Math.max(lo, lastPresent + 1 - size);
      return {
        needsProbe: false,
        offset: readFrom,
        limit: firstMissing - readFrom,
        size,
        // The probes saw a row at lastPresent.
        minRows: lastPresent + 1 - readFrom,
        pageFor: (rowsRead) => {
          const windowEnd = readFrom + rowsRead;
          const start = Math.max(lo, windowEnd - size);
          return {
            start,
            count: Math.max(0, windowEnd - start),
            hasNextPage: false,
            // The read reached firstMissing, a position known to be empty.
            windowSize: windowEnd,
          };
        },
      };
    },
  };
}

/**
 * How close the window-end search must get before the tail is read in one go: reading a few rows
 * more than the page is cheaper than another probe round, while the read stays within one call.
 */
export function tailSlack(size: number): number {
  return Math.max(32, Math.min(size, MAX_PAGE_SIZE - size));
}
