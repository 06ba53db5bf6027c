/** What the live stream moves around: a filter, and an upstream record with its order keys. */
import { createHash } from 'node:crypto';
import type { AuditRecord } from '../../upstream/identity/schemas.js';

/** In upstream terms (action spelled Create, Update, ...). */
export type LiveFilter = { readonly objectType?: string | undefined; readonly action?: string | undefined };

export const filterKey = (filter: LiveFilter): string => JSON.stringify([filter.objectType ?? null, filter.action ?? null]);

/** The filter a key names, or undefined for any other spelling: it would be polled apart. */
export function filterOfKey(key: string): LiveFilter | undefined {
  try {
    const parts: unknown = JSON.parse(key);
    if (!Array.isArray(parts) || !parts.every((part) => part === null || typeof part === 'string')) return undefined;
    const [objectType, action] = parts as (string | null)[];
    const filter = { objectType: objectType ?? undefined, action: action ?? undefined };
    return filterKey(filter) === key ? filter : undefined;
  } catch {
    return undefined;
  }
}

export interface LiveRecord {
  readonly record: AuditRecord;
  readonly timestamp: number;
  readonly uuid: string;
  /** What resume tokens carry. */
  readonly digest: string;
  /** Its entry in the filter's shared stream, when it came from one. */
  readonly position?: string;
}

export const DIGEST_BYTES = 8;

export function digestOf(uuid: string): string {
  return createHash('sha256').update(uuid).digest().subarray(0, DIGEST_BYTES).toString('base64url');
}

export function toLiveRecord(record: AuditRecord): LiveRecord {
  return { record, timestamp: record.timestamp, uuid: record.uuid, digest: digestOf(record.uuid) };
}

export function oldestFirst(a: Pick<LiveRecord, 'timestamp' | 'uuid'>, b: Pick<LiveRecord, 'timestamp' | 'uuid'>): number {
  return a.timestamp - b.timestamp || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0);
}

const FORGET_ABOVE = 256;

/** Records since the settle time before the newest are known by key, as a re-read brings them back; older ones by time. */
export class SettleWindow {
  readonly #seen = new Map<string, number>();
  #forgetAbove = FORGET_ABOVE;

  constructor(
    public floor: number,
    readonly settleMs: number,
    public newest?: number,
  ) {}

  /** The oldest time a record may be new at: a re-read starts here. */
  get start(): number {
    return this.newest === undefined ? this.floor : Math.max(this.floor, this.newest - this.settleMs);
  }

  has(key: string): boolean {
    return this.#seen.has(key);
  }

  isNew(key: string, timestamp: number): boolean {
    return timestamp >= this.start && !this.#seen.has(key);
  }

  note(key: string, timestamp: number): void {
    this.#seen.set(key, timestamp);
    if (this.newest === undefined || timestamp > this.newest) this.newest = timestamp;
    if (this.#seen.size > this.#forgetAbove) this.#forgetOld();
  }

  forgetKeys(): void {
    this.#seen.clear();
  }

  /** Keys older than the start can never be new again; forgetting them in bulk bounds memory. */
  #forgetOld(): void {
    const start = this.start;
    for (const [key, timestamp] of this.#seen) if (timestamp < start) this.#seen.delete(key);
    this.#forgetAbove = Math.max(FORGET_ABOVE, this.#seen.size * 2);
  }
}

/** Taken records are dropped from the front in slices, not one by one. */
const COMPACT_AT = 1024;

/**
 * The records a subscriber accepted and its client has not taken, a catch-up first. How far it fell behind counts from
 * the fewest waiting since the catch-up: a long replay is where it starts, and it keeps up while it takes them as they come.
 */
export class PendingRecords {
  #records: LiveRecord[] = [];
  #next = 0;
  readonly #digests = new Set<string>();
  #catchUpLeft = 0;
  #lowWater = 0;

  get size(): number {
    return this.#records.length - this.#next;
  }

  get behind(): number {
    return this.size - this.#lowWater;
  }

  get catchingUp(): boolean {
    return this.#catchUpLeft > 0;
  }

  has(digest: string): boolean {
    return this.#digests.has(digest);
  }

  /** A catch-up goes ahead of every live record: it is added, in one part or several, while nothing else waits. */
  addCatchUp(record: LiveRecord): void {
    this.add(record);
    this.#catchUpLeft++;
  }

  /** Whatever waits now is where the client starts from (a catch-up and the records held meanwhile). */
  startHere(): void {
    this.#lowWater = this.size;
  }

  add(record: LiveRecord): void {
    this.#records.push(record);
    this.#digests.add(record.digest);
  }

  take(): LiveRecord | undefined {
    if (this.size === 0) return undefined;
    const record = this.#records[this.#next++]!;
    this.#digests.delete(record.digest);
    this.#catchUpLeft = Math.max(0, this.#catchUpLeft - 1);
    this.#lowWater = Math.min(this.#lowWater, this.size);
    if (this.#next >= COMPACT_AT && this.#next * 2 >= this.#records.length) {
      this.#records = this.#records.slice(this.#next);
      this.#next = 0;
    }
    return record;
  }
}
