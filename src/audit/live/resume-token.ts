/**
 * `resumeAfter` tokens: where a stream stood right after one record, the digests of those delivered within the settle time
 * before it, and with Redis the stream position (version 3). Not signed: refused unless the gateway could have issued it.
 */
import { CHECKSUM_BYTES, openToken, sealToken } from '../../lib/checked-token.js';
import { BadUserInputError } from '../../lib/errors.js';
import { DIGEST_BYTES, filterOfKey, type LiveRecord } from './records.js';

export const TOKEN_VALIDITY_MS = 15 * 60 * 1000;
/** At most this many digests; past it the oldest are left out and `floor` rises above them. */
export const MAX_ENTRIES = 128;
/** How far a token's issue time may be ahead of this instance's clock: tokens move between instances. */
const CLOCK_SKEW_MS = 60_000;
const VERSION = 2;
const VERSION_WITH_POSITION = 3;
const STREAM_ID = /^\d{1,16}-\d{1,20}$/;
const MAX_TOKEN_CHARS = 8192;
const ENTRY_BYTES = DIGEST_BYTES + 4;

export type DeliveredEntry = Pick<LiveRecord, 'digest' | 'timestamp'>;

export interface ResumePoint {
  readonly filterKey: string;
  readonly newest: number;
  /** The resumed stream delivers nothing stamped before this. */
  readonly floor: number;
  readonly issuedAt: number;
  readonly delivered: readonly DeliveredEntry[];
  /** The filter's shared stream id of the token's record, or of the newest stream record before it. */
  readonly position?: string | undefined;
}

/** Keeps the newest MAX_ENTRIES entries; raises the floor above every entry left out. */
export function boundedPoint(point: ResumePoint): ResumePoint {
  if (point.delivered.length <= MAX_ENTRIES) return point;
  const byTime = [...point.delivered].sort((a, b) => b.timestamp - a.timestamp);
  const cut = byTime[MAX_ENTRIES]!.timestamp;
  return {
    ...point,
    floor: Math.max(point.floor, cut + 1),
    delivered: byTime.filter((entry) => entry.timestamp > cut),
  };
}

export function encodeResumeToken(input: ResumePoint): string {
  const point = boundedPoint(input);
  const filter = Buffer.from(point.filterKey);
  const position = point.position === undefined ? undefined : Buffer.from(point.position, 'latin1');
  const positionBytes = position ? 1 + position.length : 0;
  const buffer = Buffer.alloc(1 + 24 + 2 + filter.length + 2 + point.delivered.length * ENTRY_BYTES + positionBytes + CHECKSUM_BYTES);
  let at = buffer.writeUInt8(position ? VERSION_WITH_POSITION : VERSION, 0);
  at = buffer.writeDoubleBE(point.newest, at);
  at = buffer.writeDoubleBE(point.floor, at);
  at = buffer.writeDoubleBE(point.issuedAt, at);
  at = buffer.writeUInt16BE(filter.length, at);
  at += filter.copy(buffer, at);
  at = buffer.writeUInt16BE(point.delivered.length, at);
  for (const entry of point.delivered) {
    at += Buffer.from(entry.digest, 'base64url').copy(buffer, at);
    at = buffer.writeUInt32BE(Math.min(0xffffffff, Math.max(0, point.newest - entry.timestamp)), at);
  }
  if (position) {
    at = buffer.writeUInt8(position.length, at);
    at += position.copy(buffer, at);
  }
  return sealToken(buffer, at);
}

export const malformedToken = () => new BadUserInputError('resumeAfter is not a token this gateway issued.');

function decode(token: string): ResumePoint {
  const buffer = openToken(token, MAX_TOKEN_CHARS);
  if (!buffer || buffer.length < 27) throw malformedToken();
  const version = buffer.readUInt8(0);
  if (version !== VERSION && version !== VERSION_WITH_POSITION) throw malformedToken();
  const newest = buffer.readDoubleBE(1);
  const floor = buffer.readDoubleBE(9);
  const issuedAt = buffer.readDoubleBE(17);
  if (![newest, floor, issuedAt].every(Number.isSafeInteger)) throw malformedToken();
  const filterLength = buffer.readUInt16BE(25);
  if (buffer.length < 27 + filterLength + 2) throw malformedToken();
  const filterKey = buffer.toString('utf8', 27, 27 + filterLength);
  if (!filterOfKey(filterKey)) throw malformedToken();
  const count = buffer.readUInt16BE(27 + filterLength);
  let at = 29 + filterLength;
  const entriesEnd = at + count * ENTRY_BYTES;
  if (count > MAX_ENTRIES || (version === VERSION ? buffer.length !== entriesEnd : buffer.length <= entriesEnd)) throw malformedToken();
  const delivered: DeliveredEntry[] = [];
  for (let i = 0; i < count; i++, at += ENTRY_BYTES) {
    delivered.push({
      digest: buffer.toString('base64url', at, at + DIGEST_BYTES),
      timestamp: newest - buffer.readUInt32BE(at + DIGEST_BYTES),
    });
  }
  if (version === VERSION) return { filterKey, newest, floor, issuedAt, delivered };
  const positionLength = buffer.readUInt8(at);
  if (buffer.length !== at + 1 + positionLength) throw malformedToken();
  const position = buffer.toString('latin1', at + 1);
  if (!STREAM_ID.test(position)) throw malformedToken();
  return { filterKey, newest, floor, issuedAt, delivered, position };
}

export function decodeResumeToken(token: string, now: number): ResumePoint {
  const point = decode(token);
  // The times in an issued token's order (boundedPoint raises the floor at most 1 ms past the newest).
  const inOrder =
    point.issuedAt <= now + CLOCK_SKEW_MS &&
    point.newest <= point.issuedAt + CLOCK_SKEW_MS &&
    point.floor <= point.newest + 1 &&
    point.delivered.every((entry) => entry.timestamp >= point.floor);
  if (!inOrder) throw malformedToken();
  if (now - point.issuedAt > TOKEN_VALIDITY_MS) {
    throw new BadUserInputError('resumeAfter has expired (tokens are valid for 15 minutes); subscribe again, with `since` if needed.');
  }
  return point;
}

/** The newest delivered records a token carries, plus one for boundedPoint: a token costs the same however many there are. */
export class NewestDelivered {
  /** Oldest first. */
  readonly #entries: DeliveredEntry[] = [];

  add(entry: DeliveredEntry): void {
    const at = this.#entries.findLastIndex((kept) => kept.timestamp <= entry.timestamp) + 1;
    this.#entries.splice(at, 0, entry);
    if (this.#entries.length > MAX_ENTRIES + 1) this.#entries.shift();
  }

  since(bound: number): DeliveredEntry[] {
    return this.#entries.filter((entry) => entry.timestamp >= bound);
  }
}
