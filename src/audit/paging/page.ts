/**
 * One page of auditEvents: the arguments checked, the scope pinned, the page planned as an offset and
 * a limit like Pothos' `offsetForArgs`. Position 0 is the newest record; one row past the page tells hasNextPage.
 */
import type { AuditRowResult, UpstreamAction } from '../../upstream/types.js';
import { BadUserInputError } from '../../lib/errors.js';
import { decodeCursor, sameScope, type AuditCursor, type AuditScope } from './cursor.js';
import { DEFAULT_PAGE_SIZE, DEFAULT_WINDOW_MS, MAX_OBJECT_TYPE_LENGTH, MAX_PAGE_SIZE } from './limits.js';
import { checkObjectTypeCase } from './object-types.js';
import { inconsistentWindow, locateWindowEnd, type WindowEnd, type WindowReader } from './window.js';

export interface AuditConnectionArgs {
  readonly first?: number | null;
  readonly last?: number | null;
  readonly after?: string | null;
  readonly before?: string | null;
  readonly filter?: {
    readonly from?: Date | null;
    readonly to?: Date | null;
    readonly objectType?: string | null;
    /** In the upstream's spelling. */
    readonly action?: UpstreamAction | null;
  } | null;
}

/** The page the rows read make: positions [start, start + count); windowSize once the read reached the window's end. */
export interface PageSpan {
  readonly start: number;
  readonly count: number;
  readonly hasNextPage: boolean;
  readonly windowSize?: number;
}

/** Read `limit` rows from `offset`: at most `size` for the page, and at least `minRows`, known to exist. */
export interface ReadPlan {
  readonly needsProbe: false;
  readonly offset: number;
  readonly limit: number;
  readonly size: number;
  readonly minRows: number;
  readonly pageFor: (rowsRead: number) => PageSpan;
}

/** `last` without `before` ends at the window's end: probes past `knownRow` locate it to within `slack` first. */
export interface ProbePlan {
  readonly needsProbe: true;
  readonly knownRow: number;
  readonly slack: number;
  readonly afterProbe: (end: WindowEnd) => ReadPlan;
}

export type PagePlan = (ReadPlan | ProbePlan) & { readonly scope: AuditScope };

/** `now` is the pin for a first page; pages with a cursor keep the cursor's pin. */
export function planPage(args: AuditConnectionArgs, now: number): PagePlan {
  const first = checkedSize('first', args.first);
  const last = checkedSize('last', args.last);
  if (first !== undefined && last !== undefined) throw new BadUserInputError('Give `first` or `last`, not both.');
  const after = args.after == null ? undefined : decodeCursor(args.after, 'after');
  const before = args.before == null ? undefined : decodeCursor(args.before, 'before');
  if (after && before) checkCursorPair(after, before);
  const cursorScope = (after ?? before)?.scope;
  const scope = cursorScope ? scopeForCursor(args.filter, cursorScope) : scopeFromFilter(args.filter ?? {}, now);

  const lo = after ? after.offset + 1 : 0;
  const hi = before?.offset;
  // Without a size, the cursors say which way the client pages: `before` alone means backward.
  const backward = last !== undefined || (first === undefined && before !== undefined && after === undefined);
  const size = (backward ? last : first) ?? DEFAULT_PAGE_SIZE;
  if (size === 0) return { scope, ...emptyPage(lo, hi, backward) };
  if (!backward) return { scope, ...slice(lo, hi === undefined ? lo + size : Math.min(lo + size, hi)) };
  if (hi !== undefined) return { scope, ...slice(Math.max(lo, hi - size), hi) };
  return { scope, ...tail(lo, size) };
}

export async function readPage(plan: PagePlan, reader: WindowReader): Promise<PageSpan & { rows: readonly AuditRowResult[] }> {
  const read = plan.needsProbe ? plan.afterProbe(await locateWindowEnd(reader.probe, plan.knownRow, plan.slack)) : plan;
  const rows = await reader.rows(read.offset, read.limit);
  if (rows.length < read.minRows) {
    throw inconsistentWindow({ offset: read.offset, rows: rows.length, expectedRows: read.minRows });
  }
  const page = read.pageFor(rows.length);
  return { ...page, rows: rows.slice(page.start - read.offset, page.start - read.offset + page.count) };
}

function checkedSize(argument: 'first' | 'last', value: number | null | undefined): number | undefined {
  if (value == null) return undefined;
  if (value < 0 || value > MAX_PAGE_SIZE) {
    throw new BadUserInputError(`\`${argument}\` must be between 0 and ${MAX_PAGE_SIZE}.`, { argument, value });
  }
  return value;
}

function checkCursorPair(after: AuditCursor, before: AuditCursor): void {
  if (!sameScope(after.scope, before.scope)) {
    throw new BadUserInputError('`after` and `before` come from different auditEvents connections.');
  }
  if (after.offset >= before.offset) throw new BadUserInputError('`after` must point to a newer record than `before`.');
}

/** A cursor's filter applies; a filter given with it must come out the same at the cursor's pin. */
function scopeForCursor(filter: AuditConnectionArgs['filter'], cursorScope: AuditScope): AuditScope {
  if (filter == null || sameScope(scopeFromFilter(filter, cursorScope.pinnedAt), cursorScope)) return cursorScope;
  throw new BadUserInputError(
    'The cursor belongs to a different filter: repeat the filter of its first page, or leave `filter` out.',
  );
}

/** `to` defaults to the pin and is capped at it, so offsets stay put; `from` defaults to 72 hours before `to`. */
function scopeFromFilter(filter: NonNullable<AuditConnectionArgs['filter']>, pinnedAt: number): AuditScope {
  const objectType = filter.objectType ?? null;
  if (objectType !== null && (objectType.length === 0 || objectType.length > MAX_OBJECT_TYPE_LENGTH)) {
    throw new BadUserInputError(`\`filter.objectType\` must have 1 to ${MAX_OBJECT_TYPE_LENGTH} characters.`);
  }
  checkObjectTypeCase(objectType, 'filter.objectType');
  const requestedTo = filter.to?.getTime();
  const toMillis = Math.min(requestedTo ?? pinnedAt, pinnedAt);
  const fromMillis = filter.from?.getTime() ?? toMillis - DEFAULT_WINDOW_MS;
  if (fromMillis > toMillis) {
    throw new BadUserInputError(
      requestedTo === toMillis
        ? '`filter.from` is after `filter.to`.'
        : '`filter.from` is after `filter.to`, which defaults to (and is capped at) the time of the first page.',
    );
  }
  return { fromMillis, toMillis, pinnedAt, objectType, action: filter.action ?? null };
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
    pageFor: (rowsRead) => ({
      start,
      count: Math.min(size, rowsRead),
      hasNextPage: rowsRead > size,
      // Fewer rows than asked: the window ends right after them (when it reaches `start` at all).
      ...(rowsRead <= size && (rowsRead > 0 || start === 0) ? { windowSize: start + rowsRead } : {}),
    }),
  };
}

/** `first: 0` / `last: 0`: nothing to read before a `before` cursor (its record follows); else one row says if one is there. */
function emptyPage(lo: number, hi: number | undefined, backward: boolean): ReadPlan {
  const read = { needsProbe: false, size: 0, minRows: 0 } as const;
  if (hi !== undefined) {
    const start = backward ? hi : lo;
    return { ...read, offset: start, limit: 0, pageFor: () => ({ start, count: 0, hasNextPage: true }) };
  }
  return {
    ...read,
    offset: lo,
    limit: 1,
    // A backward page without `before` sits at the window's end: past the row at `lo`, if any.
    pageFor: (rowAtLo) => ({ start: backward ? lo + rowAtLo : lo, count: 0, hasNextPage: !backward && rowAtLo > 0 }),
  };
}

function tail(lo: number, size: number): ProbePlan {
  return {
    needsProbe: true,
    // An `after` cursor names a record that exists: the search for the end can start past it.
    knownRow: lo - 1,
    // Reading a few rows more than the page is cheaper than another probe round, within one call.
    slack: Math.max(32, Math.min(size, MAX_PAGE_SIZE - size)),
    afterProbe: ({ lastPresent, firstMissing }) => {
      // Read from the earliest position the page could start at up to firstMissing: the rows say where the window ends.
      const readFrom = Math.max(lo, lastPresent + 1 - size);
      return {
        needsProbe: false,
        offset: readFrom,
        limit: firstMissing - readFrom,
        size,
        minRows: lastPresent + 1 - readFrom,
        pageFor: (rowsRead) => {
          const start = Math.max(lo, readFrom + rowsRead - size);
          // The read reached firstMissing, a position known to be empty.
          return { start, count: Math.max(0, readFrom + rowsRead - start), hasNextPage: false, windowSize: readFrom + rowsRead };
        },
      };
    },
  };
}
