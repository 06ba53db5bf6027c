/** What the live stream moves around: a filter, and an upstream record with its order keys. */
import { createHash } from 'node:crypto';
import type { AuditRecord } from '../../upstream/identity/schemas.js';

/** The live filter in upstream terms (action spelled Create, Update, ...). */
export interface LiveFilter {
  readonly objectType?: string | undefined;
  readonly action?: string | undefined;
}

/** One poller per distinct key. */
export const filterKey = (filter: LiveFilter): string => JSON.stringify([filter.objectType ?? null, filter.action ?? null]);

export interface LiveRecord {
  readonly record: AuditRecord;
  readonly timestamp: number;
  readonly uuid: string;
  /** Short digest of the uuid: what resume tokens carry. */
  readonly digest: string;
  /** Its entry in the filter's shared stream, when it came from one (replicas sharing Redis). */
  readonly position?: string;
}

export const DIGEST_BYTES = 8;

export function digestOf(uuid: string): string {
  return createHash('sha256').update(uuid).digest().subarray(0, DIGEST_BYTES).toString('base64url');
}

export function toLiveRecord(record: AuditRecord): LiveRecord {
  return { record, timestamp: record.timestamp, uuid: record.uuid, digest: digestOf(record.uuid) };
}

/** Delivery order within one read: oldest first, ties by uuid. */
export function oldestFirst(a: Pick<LiveRecord, 'timestamp' | 'uuid'>, b: Pick<LiveRecord, 'timestamp' | 'uuid'>): number {
  return a.timestamp - b.timestamp || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0);
}

const FORGET_ABOVE = 256;

/**
 * What a poller or a subscriber has had of the records from the settle time before the newest of
 * them: a re-read of that time brings them back, so they are known by key; older ones, and any
 * before the floor, are refused by their time.
 */
export class SettleWindow {
  #newest: number | undefined;
  readonly #seen = new Map<string, number>();
  #forgetAbove = FORGET_ABOVE;

  constructor(
    public floor: number,
    readonly settleMs: number,
    newest?: number,
  ) {
    this.#newest = newest;
  }

  get newest(): number | undefined {
    return this.#newest;
  }

  /** The oldest time a record may be new at: a re-read starts here. */
  get start(): number {
    return this.#newest === undefined ? this.floor : Math.max(this.floor, this.#newest - this.settleMs);
  }

  has(key: string): boolean {
    return this.#seen.has(key);
  }

  isNew(key: string, timestamp: number): boolean {
    return timestamp >= this.start && !this.#seen.has(key);
  }

  note(key: string, timestamp: number): void {
    this.#seen.set(key, timestamp);
    if (this.#newest === undefined || timestamp > this.#newest) this.#newest = timestamp;
    if (this.#seen.size > this.#forgetAbove) this.#forgetOld();
  }

  /** Forgets every key, keeping the window where it is. */
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
