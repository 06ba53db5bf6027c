/**
 * An in-memory identity service for the live audit units: it answers the paged audit report from
 * a list of records (newest first, `fromMillis` and `toMillis` inclusive), records every query, and
 * can be made to fail or to hold its answer.
 */
import { createLogger } from '../../src/lib/logger.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';
import type { AuditReportQuery, AuditRowResult, CallOptions, IdentityApi } from '../../src/upstream/types.js';
import { MemoryLog } from '../helpers/memory-log.js';

export const auditRecord = (id: string | number, timestamp: number, objectType = 'LOGIN'): AuditRecord =>
  ({ uuid: `uuid-${id}`, timestamp, objectType, objectAction: 'Create' }) as unknown as AuditRecord;

export interface FakeIdentity extends IdentityApi {
  readonly records: AuditRecord[];
  readonly queries: AuditReportQuery[];
  readonly signals: (AbortSignal | undefined)[];
  /** Rows that cannot be read, answered after the records of the first page. */
  unreadable: number;
  /** Makes the next calls reject with this, until set to undefined. */
  failWith: unknown;
  /** While set, calls wait for `open()` before answering. */
  hold(): void;
  open(): void;
}

export function fakeIdentity(records: AuditRecord[] = []): FakeIdentity {
  let gate: { promise: Promise<void>; resolve: () => void } | undefined;
  const fake: FakeIdentity = {
    records,
    queries: [],
    signals: [],
    unreadable: 0,
    failWith: undefined,
    hold() {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      gate = { promise, resolve };
    },
    open() {
      gate?.resolve();
      gate = undefined;
    },
    async auditReport(query: AuditReportQuery, call: CallOptions) {
      fake.queries.push(query);
      fake.signals.push(call.signal);
      if (gate) await gate.promise;
      if (fake.failWith !== undefined) throw fake.failWith;
      const matching: AuditRowResult[] = fake.records
        .filter((r) => r.timestamp >= query.fromMillis && r.timestamp <= query.toMillis)
        .filter((r) => query.objectType === undefined || r.objectType === query.objectType)
        .sort((a, b) => b.timestamp - a.timestamp)
        .map((record) => ({ ok: true, record }));
      const bad: AuditRowResult[] = Array.from({ length: fake.unreadable }, () => ({ ok: false, reason: 'unreadable' }));
      const rows = [...matching, ...bad];
      return { rows: rows.slice(query.startIndex, query.startIndex + query.pageSize) };
    },
  };
  return fake;
}

export function memoryLogger() {
  const memory = new MemoryLog();
  return { log: createLogger({ level: 'debug', destination: memory }), memory };
}
