/**
 * The audit events, kept sorted newest first (ties: uuid ascending, so the order is total and
 * stable). Windows are found by binary search. Each row (record JSON included) is serialized once,
 * on first use: serializing all 24k records up front would double the start-up time.
 */
import type { AuditRecordData } from './types.js';
import { recordTimestamp } from './audit-seed.js';

interface StoredEvent {
  readonly record: AuditRecordData;
  readonly timestamp: number;
  readonly uuid: string;
  /** The row's record column is written as invalid JSON. */
  corrupted: boolean;
  /** The whole row serialized, built on first use. */
  rowJson: string | undefined;
}

export interface AuditQuery {
  readonly fromMillis: number;
  readonly toMillis: number;
  readonly objectType?: string | undefined;
  readonly action?: string | undefined;
  readonly startIndex: number;
  /** Infinity for everything. */
  readonly pageSize: number;
}

function newestFirst(a: StoredEvent, b: StoredEvent): number {
  return b.timestamp - a.timestamp || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0);
}

function toStored(record: AuditRecordData): StoredEvent {
  Object.freeze(record.values);
  return {
    record: Object.freeze(record),
    timestamp: recordTimestamp(record),
    uuid: record.uuid,
    corrupted: false,
    rowJson: undefined,
  };
}

export class AuditStore {
  private events: StoredEvent[];
  private readonly byUuid = new Map<string, StoredEvent>();

  constructor(records: readonly AuditRecordData[]) {
    this.events = records.map(toStored).sort(newestFirst);
    for (const event of this.events) this.byUuid.set(event.uuid, event);
  }

  get size(): number {
    return this.events.length;
  }

  has(uuid: string): boolean {
    return this.byUuid.has(uuid);
  }

  /** Adds records (uuids must be new) and returns them newest first. */
  insert(records: readonly AuditRecordData[]): AuditRecordData[] {
    const added = records.map(toStored).sort(newestFirst);
    for (const event of added) {
      if (this.byUuid.has(event.uuid)) throw new Error(`duplicate audit event uuid ${event.uuid}`);
      this.byUuid.set(event.uuid, event);
    }
    this.events = mergeSorted(this.events, added);
    return added.map((e) => e.record);
  }

  /** The row of this event will carry a record string that is not valid JSON. */
  corrupt(uuid: string): boolean {
    const event = this.byUuid.get(uuid);
    if (!event) return false;
    event.corrupted = true;
    event.rowJson = undefined;
    return true;
  }

  /** Matching records, newest first, after skipping `startIndex` matches. */
  records(query: AuditQuery): AuditRecordData[] {
    return this.select(query).map((e) => e.record);
  }

  /** Matching rows, each already serialized as a JSON array. */
  rows(query: AuditQuery): string[] {
    return this.select(query).map(rowJsonOf);
  }

  private select(query: AuditQuery): StoredEvent[] {
    const { fromMillis, toMillis, objectType, startIndex, pageSize } = query;
    if (fromMillis > toMillis || pageSize <= 0) return [];
    // Descending timestamps: the window is [first ts <= toMillis, first ts < fromMillis).
    const lo = this.firstIndex((e) => e.timestamp <= toMillis);
    const hi = this.firstIndex((e) => e.timestamp < fromMillis);
    const objectAction = query.action?.toUpperCase();
    if (objectType === undefined && objectAction === undefined) {
      return this.events.slice(Math.min(lo + startIndex, hi), Math.min(lo + startIndex + pageSize, hi));
    }
    const page: StoredEvent[] = [];
    let skip = startIndex;
    for (let i = lo; i < hi && page.length < pageSize; i++) {
      const event = this.events[i] as StoredEvent;
      if (objectType !== undefined && event.record.objectType !== objectType) continue;
      if (objectAction !== undefined && event.record.objectAction !== objectAction) continue;
      if (skip > 0) skip--;
      else page.push(event);
    }
    return page;
  }

  /** First index whose event satisfies `test`, which must be false then true along the array. */
  private firstIndex(test: (e: StoredEvent) => boolean): number {
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (test(this.events[mid] as StoredEvent)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

function mergeSorted(a: StoredEvent[], b: StoredEvent[]): StoredEvent[] {
  const out: StoredEvent[] = new Array<StoredEvent>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as StoredEvent;
    const y = b[j] as StoredEvent;
    if (newestFirst(x, y) <= 0) {
      out[k++] = x;
      i++;
    } else {
      out[k++] = y;
      j++;
    }
  }
  while (i < a.length) out[k++] = a[i++] as StoredEvent;
  while (j < b.length) out[k++] = b[j++] as StoredEvent;
  return out;
}

function rowJsonOf(event: StoredEvent): string {
  if (event.rowJson === undefined) {
    const recordJson = JSON.stringify(event.record);
    event.rowJson = JSON.stringify([
      String(event.timestamp),
      userAndDomain(event.record),
      eventText(event.record),
      event.record.objectName ?? null,
      // A proper prefix of a JSON object never parses.
      event.corrupted ? recordJson.slice(0, Math.floor(recordJson.length * 0.6)) : recordJson,
    ]);
  }
  return event.rowJson;
}

/** `admin (System Domain)`; a service name alone; an empty string for system events. */
function userAndDomain(r: AuditRecordData): string {
  if (r.actorUserName === null) return '';
  return r.actorDomain === null ? r.actorUserName : `${r.actorUserName} (${r.actorDomain})`;
}

/** `LOGIN (Password (Local Directory))`, `Group (UPDATE)`, or the bare type. */
function eventText(r: AuditRecordData): string {
  const authMethods = r.values['authMethods'];
  if (typeof authMethods === 'string') return `${r.objectType} (${authMethods})`;
  return r.objectAction ? `${r.objectType} (${r.objectAction})` : r.objectType;
}
