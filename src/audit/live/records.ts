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
