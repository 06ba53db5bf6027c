/**
 * Reads every record of one time window through the identity client, paging with the window pinned
 * (`toMillis` fixed when the read starts), and returns them oldest first. Records that shift across
 * a page boundary while paging are read twice at worst; callers recognise them by uuid.
 */
import type { Logger } from 'pino';
import type { IdentityApi } from '../upstream/types.js';
import { oldestFirst, toLiveRecord, type LiveFilter, type LiveRecord } from './records.js';

export const UPSTREAM_PAGE_SIZE = 5000;
/** A window that needs more pages than this is read in part (bounds one read's memory). */
export const MAX_PAGES_PER_READ = 40;

export interface WindowRead {
  readonly identity: IdentityApi;
  readonly filter: LiveFilter;
  readonly fromMillis: number;
  readonly toMillis: number;
  readonly log: Logger;
  readonly signal?: AbortSignal;
  readonly pageSize?: number;
}

export async function readWindow(read: WindowRead): Promise<LiveRecord[]> {
  const pageSize = read.pageSize ?? UPSTREAM_PAGE_SIZE;
  const byUuid = new Map<string, LiveRecord>();
  let unreadable = 0;
  for (let page = 0; page < MAX_PAGES_PER_READ; page++) {
    const { rows } = await read.identity.auditReport(
      {
        fromMillis: read.fromMillis,
        toMillis: read.toMillis,
        objectType: read.filter.objectType,
        action: read.filter.action,
        pageSize,
        startIndex: page * pageSize,
      },
      { log: read.log, ...(read.signal ? { signal: read.signal } : {}) },
    );
    for (const row of rows) {
      if (row.ok) byUuid.set(row.record.uuid, toLiveRecord(row.record));
      else unreadable++;
    }
    if (rows.length < pageSize) break;
    if (page === MAX_PAGES_PER_READ - 1) {
      read.log.warn({ pages: MAX_PAGES_PER_READ }, 'live audit read stopped at its page limit');
    }
  }
  // An unreadable row has no uuid or time to deliver it by; the identity client logged why.
  if (unreadable > 0) read.log.warn({ unreadable }, 'live audit rows skipped: records unreadable');
  return [...byUuid.values()].sort(oldestFirst);
}
