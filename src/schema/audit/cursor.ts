/**
 * Opaque, stable cursors: base64url of a compact JSON tuple
 * `[version, offset, fromMillis, toMillis, pinnedAt, objectType, action]`.
 * The offset is the row's position in the pinned window (0 = newest), so a cursor stays valid
 * however many events arrive later. Decoding is strict: one canonical spelling per cursor.
 */
import { z } from 'zod';
import { BadUserInputError } from '../../errors.js';
import { UPSTREAM_ACTIONS } from './actions.js';
import { MAX_OBJECT_TYPE_LENGTH, MAX_OFFSET } from './limits.js';
import type { AuditScope } from './scope.js';

const CURSOR_VERSION = 1;
/** Generous for the longest objectType; anything longer is not one of ours. */
const MAX_CURSOR_LENGTH = 400;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export interface AuditCursor {
  readonly offset: number;
  readonly scope: AuditScope;
}

/** Date's own range, so every decoded bound is a valid DateTime. */
const epochMillis = z.number().int().min(-8.64e15).max(8.64e15);

const cursorTuple = z
  .tuple([
    z.literal(CURSOR_VERSION),
    z.number().int().min(0).max(MAX_OFFSET),
    epochMillis,
    epochMillis,
    epochMillis,
    z.string().min(1).max(MAX_OBJECT_TYPE_LENGTH).nullable(),
    z.enum(UPSTREAM_ACTIONS).nullable(),
  ])
  .refine(([, , from, to, pinnedAt]) => from <= to && to <= pinnedAt);

/**
 * Cursors for one page: the scope part of the tuple is serialized once, so each row costs one
 * string concatenation and one base64 encoding (pages have up to 5000 rows).
 */
export function cursorEncoder(scope: AuditScope): (offset: number) => string {
  const tail = JSON.stringify([scope.fromMillis, scope.toMillis, scope.pinnedAt, scope.objectType, scope.action]);
  const rest = `,${tail.slice(1)}`;
  return (offset) => Buffer.from(`[${CURSOR_VERSION},${offset}${rest}`, 'utf8').toString('base64url');
}

export function encodeCursor(cursor: AuditCursor): string {
  return cursorEncoder(cursor.scope)(cursor.offset);
}

/** Reads a client's `after`/`before`; anything that is not a cursor this gateway made is BAD_USER_INPUT. */
export function decodeCursor(text: string, argument: 'after' | 'before'): AuditCursor {
  const invalid = () => new BadUserInputError(`\`${argument}\` is not a valid auditEvents cursor.`, { argument });
  if (text.length === 0 || text.length > MAX_CURSOR_LENGTH || !BASE64URL.test(text)) throw invalid();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const parsed = cursorTuple.safeParse(json);
  if (!parsed.success) throw invalid();
  const [, offset, fromMillis, toMillis, pinnedAt, objectType, action] = parsed.data;
  const cursor: AuditCursor = { offset, scope: { fromMillis, toMillis, pinnedAt, objectType, action } };
  // Base64 and JSON both admit other spellings of the same tuple; only ours is a cursor.
  if (encodeCursor(cursor) !== text) throw invalid();
  return cursor;
}
