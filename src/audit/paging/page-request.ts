/**
 * Turns the auditEvents arguments into one checked request: the scope (filter + pinned window)
 * and the range of window positions the page may draw from. Every bad argument is BAD_USER_INPUT.
 */
import { BadUserInputError } from '../../lib/errors.js';
import type { UpstreamAction } from '../../upstream/identity/actions.js';
import { decodeCursor, type AuditCursor } from './cursor.js';
import { checkObjectTypeCase } from './object-types.js';
import { DEFAULT_PAGE_SIZE, DEFAULT_WINDOW_MS, MAX_OBJECT_TYPE_LENGTH, MAX_PAGE_SIZE } from './limits.js';
import { sameScope, type AuditScope } from './scope.js';

export interface AuditFilterInput {
  readonly from?: Date | null;
  readonly to?: Date | null;
  readonly objectType?: string | null;
  /** Already in the upstream's spelling (the AuditAction enum maps it). */
  readonly action?: UpstreamAction | null;
}

export interface AuditConnectionArgs {
  readonly first?: number | null;
  readonly last?: number | null;
  readonly after?: string | null;
  readonly before?: string | null;
  readonly filter?: AuditFilterInput | null;
}

export interface PageRequest {
  readonly scope: AuditScope;
  /** First window position the page may use (just past `after`). */
  readonly lo: number;
  /** Position of `before` (exclusive); undefined: up to the end of the window. */
  readonly hi: number | undefined;
  /** forward: the first `size` positions from lo; backward: the last `size` before hi. */
  readonly direction: 'forward' | 'backward';
  readonly size: number;
}

/** `now` is the pin for a first page; pages with a cursor keep the cursor's pin. */
export function parsePageRequest(args: AuditConnectionArgs, now: number): PageRequest {
  const first = checkedSize('first', args.first);
  const last = checkedSize('last', args.last);
  if (first !== undefined && last !== undefined) {
    throw new BadUserInputError('Give `first` or `last`, not both.');
  }
  const after = args.after == null ? undefined : decodeCursor(args.after, 'after');
  const before = args.before == null ? undefined : decodeCursor(args.before, 'before');
  if (after && before) checkCursorPair(after, before);

  const cursorScope = (after ?? before)?.scope;
  const scope = cursorScope ? scopeForCursor(args.filter, cursorScope) : scopeFromFilter(args.filter ?? {}, now);

  // Without a size, the cursors say which way the client pages: `before` alone means backward.
  const backward = last !== undefined || (first === undefined && before !== undefined && after === undefined);
  return {
    scope,
    lo: after ? after.offset + 1 : 0,
    hi: before?.offset,
    direction: backward ? 'backward' : 'forward',
    size: (backward ? last : first) ?? DEFAULT_PAGE_SIZE,
  };
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
  if (after.offset >= before.offset) {
    throw new BadUserInputError('`after` must point to a newer record than `before`.');
  }
}

/** A cursor's filter applies; a filter given with it must come out the same at the cursor's pin. */
function scopeForCursor(filter: AuditFilterInput | null | undefined, cursorScope: AuditScope): AuditScope {
  if (filter == null) return cursorScope;
  const scope = scopeFromFilter(filter, cursorScope.pinnedAt);
  if (!sameScope(scope, cursorScope)) {
    throw new BadUserInputError(
      'The cursor belongs to a different filter: repeat the filter of its first page, or leave `filter` out.',
    );
  }
  return scope;
}

/**
 * `to` defaults to the pin and is capped at it (events newer than the first page never enter the
 * window, so offsets stay put); `from` defaults to 72 hours before `to`.
 */
export function scopeFromFilter(filter: AuditFilterInput, pinnedAt: number): AuditScope {
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
