/**
 * Opaque, stable, short cursors: base64url of a few bytes,
 *   version | varint offset | flags (action, objectType present) | zigzag varint fromMillis
 *   | varint (toMillis - fromMillis) | varint (pinnedAt - toMillis) | objectType (UTF-8)
 *   | CRC-32 of all that (4 bytes, src/lib/checksum.ts: a cut or altered cursor is refused, not read as another)
 * About 26 characters without an objectType (the JSON tuple of version 1 took about 80): a
 * 5000-row page carries 130 KB of cursors instead of 400 KB. The per-page part (window, pin,
 * filter) is encoded once per page; each row adds its offset.
 * The offset is the row's position in the pinned window (0 = newest), so a cursor stays valid
 * however many events arrive later. Decoding is strict: one canonical spelling per cursor.
 */
import { CHECKSUM_BYTES, checkedPayload, writeChecksum } from '../../lib/checksum.js';
import { BadUserInputError } from '../../lib/errors.js';
import { MAX_DATE_MS } from '../../upstream/identity/schemas.js';
import { UPSTREAM_ACTIONS, type UpstreamAction } from '../../upstream/identity/actions.js';
import { MAX_OBJECT_TYPE_LENGTH, MAX_OFFSET } from './limits.js';
import type { AuditScope } from './scope.js';

const CURSOR_VERSION = 3;
/** Version, offset, flags and three varints of at most 10 bytes each, the longest objectType, the checksum. */
const MAX_CURSOR_BYTES = 1 + 10 + 1 + 3 * 10 + 4 * MAX_OBJECT_TYPE_LENGTH + CHECKSUM_BYTES;
const MAX_CURSOR_LENGTH = Math.ceil((MAX_CURSOR_BYTES * 4) / 3);
const HAS_OBJECT_TYPE = 0x08;
const ACTION_MASK = 0x07;

export interface AuditCursor {
  readonly offset: number;
  readonly scope: AuditScope;
}

function pushVarint(bytes: number[], value: bigint): void {
  let rest = value;
  while (rest >= 0x80n) {
    bytes.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  bytes.push(Number(rest));
}

const zigzag = (value: bigint) => (value >= 0n ? value * 2n : -value * 2n - 1n);
const unzigzag = (value: bigint) => (value & 1n ? -(value + 1n) / 2n : value / 2n);

/** The per-page part: flags, window, pin and objectType. */
function scopeBytes(scope: AuditScope): Buffer {
  const bytes: number[] = [];
  // Stryker disable next-line ConditionalExpression: indexOf(null) + 1 is 0 as well, the test is there for the types
  const action = scope.action === null ? 0 : UPSTREAM_ACTIONS.indexOf(scope.action) + 1;
  bytes.push(action | (scope.objectType === null ? 0 : HAS_OBJECT_TYPE));
  pushVarint(bytes, zigzag(BigInt(scope.fromMillis)));
  pushVarint(bytes, BigInt(scope.toMillis) - BigInt(scope.fromMillis));
  pushVarint(bytes, BigInt(scope.pinnedAt) - BigInt(scope.toMillis));
  const head = Buffer.from(bytes);
  return scope.objectType === null ? head : Buffer.concat([head, Buffer.from(scope.objectType)]);
}

/** Cursors for one page: the scope is encoded once, each row adds its offset (pages have up to 5000 rows). */
export function cursorEncoder(scope: AuditScope): (offset: number) => string {
  const tail = scopeBytes(scope);
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
    return bytes.subarray(0, writeChecksum(bytes, length)).toString('base64url');
  };
}

export function encodeCursor(cursor: AuditCursor): string {
  return cursorEncoder(cursor.scope)(cursor.offset);
}

class Reader {
  position = 0;
  constructor(readonly bytes: Buffer) {}

  byte(): number {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: bytes past the end would read as zeros and re-encode longer, so decodeCursor rejects them either way; this keeps the reader honest
    if (this.position >= this.bytes.length) throw new RangeError('cursor ends early');
    return this.bytes[this.position++]!;
  }

  varint(): bigint {
    let value = 0n;
    // Stryker disable next-line EqualityOperator: an eleventh byte makes the value out of range or padded, rejected either way
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = this.byte();
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
    // Stryker disable next-line StringLiteral: the message is never shown, decodeCursor answers with its own
    throw new RangeError('varint too long');
  }

  rest(): Buffer {
    const rest = this.bytes.subarray(this.position);
    this.position = this.bytes.length;
    return rest;
  }
}

/** Date's own range, so every decoded bound is a valid DateTime. */
const withinEpoch = (value: bigint) => value >= -BigInt(MAX_DATE_MS) && value <= BigInt(MAX_DATE_MS);

function readCursor(bytes: Buffer): AuditCursor | undefined {
  const reader = new Reader(bytes);
  if (reader.byte() !== CURSOR_VERSION) return undefined;
  const offset = reader.varint();
  const flags = reader.byte();
  const from = unzigzag(reader.varint());
  const to = from + reader.varint();
  const pinnedAt = to + reader.varint();
  const objectTypeBytes = reader.rest();
  const actionIndex = flags & ACTION_MASK;
  const hasObjectType = (flags & HAS_OBJECT_TYPE) !== 0;
  if (offset > BigInt(MAX_OFFSET) || !withinEpoch(from) || !withinEpoch(pinnedAt)) return undefined;
  if (hasObjectType !== objectTypeBytes.length > 0) return undefined;
  const objectType = hasObjectType ? objectTypeBytes.toString() : null;
  if (objectType !== null && objectType.length > MAX_OBJECT_TYPE_LENGTH) return undefined;
  // Unknown flag bits and actions 6 and 7 read as no action: they re-encode differently and are rejected.
  const action: UpstreamAction | null = UPSTREAM_ACTIONS[actionIndex - 1] ?? null;
  return {
    offset: Number(offset),
    scope: { fromMillis: Number(from), toMillis: Number(to), pinnedAt: Number(pinnedAt), objectType, action },
  };
}

/** Reads a client's `after`/`before`; anything that is not a cursor this gateway made is BAD_USER_INPUT. */
export function decodeCursor(text: string, argument: 'after' | 'before'): AuditCursor {
  const invalid = () => new BadUserInputError(`\`${argument}\` is not a valid auditEvents cursor.`, { argument });
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a bound on work only, the re-encode comparison below rejects longer text too
  if (text.length > MAX_CURSOR_LENGTH) throw invalid();
  let cursor: AuditCursor | undefined;
  const payload = checkedPayload(Buffer.from(text, 'base64url'));
  try {
    if (payload) cursor = readCursor(payload);
  } catch {
    // Ends early or has an overlong varint: left undefined, rejected below.
  }
  // Varints, base64 and UTF-8 all admit other spellings of the same cursor; only ours is one.
  if (!cursor || encodeCursor(cursor) !== text) throw invalid();
  return cursor;
}
