/** How a live poll or catch-up reads its window upstream, and the order keys of what it reads. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestOf, filterKey, oldestFirst, toLiveRecord } from '../../src/live/records.js';
import { MAX_PAGES_PER_READ, readWindow, UPSTREAM_PAGE_SIZE } from '../../src/live/window-read.js';
import type { AuditRowResult, IdentityApi } from '../../src/upstream/types.js';
import { auditRecord, fakeIdentity, memoryLogger } from './fake-identity.js';

const start = Date.UTC(2026, 10, 23, 12, 0, 0);

describe('readWindow', () => {
  it('pages with the window pinned until a short page, and returns the records oldest first', async () => {
    const identity = fakeIdentity(Array.from({ length: 5 }, (_, i) => auditRecord(i, start + i)));
    const { log, memory } = memoryLogger();
    const signal = new AbortController().signal;
    const records = await readWindow({
      identity,
      filter: { objectType: 'LOGIN', action: 'Create' },
      fromMillis: start,
      toMillis: start + 100,
      log,
      signal,
      pageSize: 2,
    });
    expect(records.map((r) => r.uuid)).toEqual(['uuid-0', 'uuid-1', 'uuid-2', 'uuid-3', 'uuid-4']);
    expect(records[0]).toEqual({ record: identity.records[0], timestamp: start, uuid: 'uuid-0', digest: digestOf('uuid-0') });
    expect(identity.queries).toEqual([0, 2, 4].map((startIndex) => ({
      fromMillis: start,
      toMillis: start + 100,
      objectType: 'LOGIN',
      action: 'Create',
      pageSize: 2,
      startIndex,
    })));
    expect(identity.signals).toEqual([signal, signal, signal]);
    expect(memory.lines()).toEqual([]);
  });

  it('reads one more page after a full one, and takes pages of 5000 by default', async () => {
    const identity = fakeIdentity(Array.from({ length: 4 }, (_, i) => auditRecord(i, start + i)));
    const { log } = memoryLogger();
    const records = await readWindow({ identity, filter: {}, fromMillis: start, toMillis: start + 100, log, pageSize: 2 });
    expect(records).toHaveLength(4);
    expect(identity.queries.map((q) => q.startIndex)).toEqual([0, 2, 4]);
    expect(identity.signals).toEqual([undefined, undefined, undefined]);

    const whole = fakeIdentity([auditRecord(1, start)]);
    await readWindow({ identity: whole, filter: {}, fromMillis: start, toMillis: start, log });
    expect(whole.queries.map((q) => q.pageSize)).toEqual([UPSTREAM_PAGE_SIZE]);
    expect(UPSTREAM_PAGE_SIZE).toBe(5000);
  });

  it('delivers a record read twice across a page boundary once', async () => {
    const shifted = auditRecord('shifted', start + 5);
    const pages: AuditRowResult[][] = [
      [{ ok: true, record: auditRecord('newest', start + 9) }, { ok: true, record: shifted }],
      [{ ok: true, record: shifted }, { ok: true, record: auditRecord('oldest', start + 1) }],
      [],
    ];
    const identity: IdentityApi = { auditReport: async (query) => ({ rows: pages[query.startIndex / 2]! }) };
    const { log } = memoryLogger();
    const records = await readWindow({ identity, filter: {}, fromMillis: start, toMillis: start + 10, log, pageSize: 2 });
    expect(records.map((r) => r.uuid)).toEqual(['uuid-oldest', 'uuid-shifted', 'uuid-newest']);
  });

  it('skips unreadable rows, keeps paging past them, and says how many in one warning', async () => {
    const identity = fakeIdentity([auditRecord(1, start)]);
    identity.unreadable = 2;
    const { log, memory } = memoryLogger();
    const records = await readWindow({ identity, filter: {}, fromMillis: start, toMillis: start, log, pageSize: 2 });
    expect(records.map((r) => r.uuid)).toEqual(['uuid-1']);
    expect(identity.queries).toHaveLength(2);
    expect(memory.lines()).toEqual([expect.objectContaining({ level: 40, unreadable: 2, msg: 'live audit rows skipped: records unreadable' })]);
  });

  it(`stops at ${MAX_PAGES_PER_READ} pages and says so`, async () => {
    const identity = fakeIdentity(Array.from({ length: MAX_PAGES_PER_READ + 5 }, (_, i) => auditRecord(i, start + i)));
    const { log, memory } = memoryLogger();
    const records = await readWindow({ identity, filter: {}, fromMillis: start, toMillis: start + 1000, log, pageSize: 1 });
    expect(identity.queries).toHaveLength(MAX_PAGES_PER_READ);
    expect(MAX_PAGES_PER_READ).toBe(40);
    expect(records).toHaveLength(MAX_PAGES_PER_READ);
    // The newest pages are read first: what is left unread is the oldest.
    expect(records[0]!.uuid).toBe('uuid-5');
    expect(memory.lines()).toEqual([expect.objectContaining({ level: 40, pages: MAX_PAGES_PER_READ, msg: 'live audit read stopped at its page limit' })]);
  });

  it('says nothing when the last page it may read is also the last one there is', async () => {
    const identity = fakeIdentity(Array.from({ length: MAX_PAGES_PER_READ - 1 }, (_, i) => auditRecord(i, start + i)));
    const { log, memory } = memoryLogger();
    await readWindow({ identity, filter: {}, fromMillis: start, toMillis: start + 1000, log, pageSize: 1 });
    expect(identity.queries).toHaveLength(MAX_PAGES_PER_READ);
    expect(memory.lines()).toEqual([]);
  });
});

describe('live records', () => {
  it('one poller key per filter, whatever leaves a part out', () => {
    expect(filterKey({})).toBe('[null,null]');
    expect(filterKey({ objectType: undefined, action: undefined })).toBe('[null,null]');
    expect(filterKey({ objectType: 'LOGIN', action: 'Create' })).toBe('["LOGIN","Create"]');
    expect(filterKey({ action: 'Create' })).toBe('[null,"Create"]');
  });

  it('a digest is the first 8 bytes of the uuid\'s SHA-256, base64url', () => {
    const full = createHash('sha256').update('uuid-1').digest();
    expect(digestOf('uuid-1')).toBe(full.subarray(0, 8).toString('base64url'));
    expect(digestOf('uuid-1')).toHaveLength(11);
    expect(digestOf('uuid-2')).not.toBe(digestOf('uuid-1'));
  });

  it('orders oldest first, ties by uuid', () => {
    const records = [
      toLiveRecord(auditRecord('b', start)),
      toLiveRecord(auditRecord('c', start - 1)),
      toLiveRecord(auditRecord('a', start)),
      toLiveRecord(auditRecord('a', start)),
      toLiveRecord(auditRecord('d', start + 1)),
    ];
    expect(records.sort(oldestFirst).map((r) => r.uuid)).toEqual(['uuid-c', 'uuid-a', 'uuid-a', 'uuid-b', 'uuid-d']);
    const [a, b] = [toLiveRecord(auditRecord('a', start)), toLiveRecord(auditRecord('b', start))];
    expect(oldestFirst(a, b)).toBe(-1);
    expect(oldestFirst(b, a)).toBe(1);
    expect(oldestFirst(a, a)).toBe(0);
  });
});
