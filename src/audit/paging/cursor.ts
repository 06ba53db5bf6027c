/**
 * Cursors: base64url of version | varint offset | flags (action, objectType present) | zigzag varint
 * fromMillis | varint (to - from) | varint (pinnedAt - to) | objectType | CRC-32. The offset is the
 * row's position in the pinned window (0 = newest): valid however many events arrive later.
 */
import { CHECKSUM_BYTES, openToken, sealToken } from '../../lib/checked-token.js';
import { BadUserInputError } from '../../lib/errors.js';
import { UPSTREAM_ACTIONS, type UpstreamAction } from '../../upstream/types.js';
import { MAX_DATE_MS } from '../../upstream/identity/schemas.js';
import { MAX_OBJECT_TYPE_LENGTH, MAX_OFFSET } from './limits.js';

const CURSOR_VERSION = 3;
const MAX_CURSOR_LENGTH = Math.ceil(((1 + 10 + 1 + 3 * 10 + 4 * MAX_OBJECT_TYPE_LENGTH + CHECKSUM_BYTES) * 4) / 3);
const HAS_OBJECT_TYPE = 0x08;
const ACTION_MASK = 0x07;

/** The filter and the window (inclusive, epoch ms) pinned when the connection's first page was read at `pinnedAt`. */
export interface AuditScope {
  readonly fromMillis: number;
  readonly toMillis: number;
  readonly pinnedAt: number;
  readonly objectType: string | null;
  readonly action: UpstreamAction | null;
}

export type AuditCursor = { readonly offset: number; readonly scope: AuditScope };

export const sameScope = (a: AuditScope, b: AuditScope) =>
  a.fromMillis === b.fromMillis &&
  a.toMillis === b.toMillis &&
  a.pinnedAt === b.pinnedAt &&
  a.objectType === b.objectType &&
  a.action === b.action;

function pushVarint(bytes: number[], value: bigint): void {
  let rest = value;
  while (rest >= 0x80n) {
    bytes.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  bytes.push(Number(rest));
}

/** Cursors for one page: the scope is encoded once, each row adds its offset. */
export function cursorEncoder(scope: AuditScope): (offset: number) => string {
  const head: number[] = [];
  const action = (UPSTREAM_ACTIONS as readonly (string | null)[]).indexOf(scope.action) + 1;
  head.push(action | (scope.objectType === null ? 0 : HAS_OBJECT_TYPE));
  const from = BigInt(scope.fromMillis);
  pushVarint(head, from >= 0n ? from * 2n : -from * 2n - 1n);
  pushVarint(head, BigInt(scope.toMillis) - from);
  pushVarint(head, BigInt(scope.pinnedAt) - BigInt(scope.toMillis));
  const tail = Buffer.concat([Buffer.from(head), Buffer.from(scope.objectType ?? '')]);
  return (offset) => {
    // Offsets stay below 2^49: plain number arithmetic is exact, and cheaper per row than BigInt.
    const bytes = Buffer.allocUnsafe(1 + 8 + tail.length + CHECKSUM_BYTES);
    bytes[0] = CURSOR_VERSION;
    let length = 1;
    let rest = offset;
    while (rest >= 0x80) {
      bytes[length++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    bytes[length++] = rest;
    length += tail.copy(bytes, length);
    return sealToken(bytes, length);
  };
}

export function encodeCursor(cursor: AuditCursor): string {
  return cursorEncoder(cursor.scope)(cursor.offset);
}

/** Date's own range, so every decoded bound is a valid DateTime. */
const withinEpoch = (value: bigint) => value >= -BigInt(MAX_DATE_MS) && value <= BigInt(MAX_DATE_MS);

function readCursor(bytes: Buffer): AuditCursor | undefined {
  let position = 0;
  const byte = () => bytes.readUInt8(position++);
  const varint = () => {
    let value = 0n;
    // readUInt8 throws at the end; an overlong spelling re-encodes differently.
    for (let shift = 0n; ; shift += 7n) {
      const next = byte();
      value |= BigInt(next & 0x7f) << shift;
      if (next < 0x80) return value;
    }
  };
  if (byte() !== CURSOR_VERSION) return undefined;
  const offset = varint();
  const flags = byte();
  const zigzag = varint();
  const from = zigzag & 1n ? -(zigzag + 1n) / 2n : zigzag / 2n;
  const to = from + varint();
  const pinnedAt = to + varint();
  const objectType = bytes.subarray(position).toString();
  if (offset > BigInt(MAX_OFFSET) || !withinEpoch(from) || !withinEpoch(pinnedAt)) return undefined;
  if ((flags & HAS_OBJECT_TYPE) === 0 ? objectType !== '' : objectType === '') return undefined;
  if (objectType.length > MAX_OBJECT_TYPE_LENGTH) return undefined;
  // Unknown flag bits and actions 6 and 7 read as no action: they re-encode differently and are rejected.
  const action = UPSTREAM_ACTIONS[(flags & ACTION_MASK) - 1] ?? null;
  return {
    offset: Number(offset),
    scope: { fromMillis: Number(from), toMillis: Number(to), pinnedAt: Number(pinnedAt), objectType: objectType || null, action },
  };
}

/** Reads a client's `after`/`before`; anything that is not a cursor this gateway made is BAD_USER_INPUT. */
export function decodeCursor(text: string, argument: 'after' | 'before'): AuditCursor {
  const payload = openToken(text, MAX_CURSOR_LENGTH);
  let cursor: AuditCursor | undefined;
  try {
    cursor = payload && readCursor(payload);
  } catch {
    // Ends early: not a cursor.
  }
  // Varints and UTF-8 admit other spellings of the same cursor; only ours is one.
  if (!cursor || encodeCursor(cursor) !== text) {
    throw new BadUserInputError(`\`${argument}\` is not a valid auditEvents cursor.`, { argument });
  }
  return cursor;
}
