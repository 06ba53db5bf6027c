/** How a live poll or catch-up reads its window upstream, and the order keys of what it reads. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestOf, filterKey, oldestFirst, toLiveRecord } from '../../src/audit/live/records.js';
import { HeapEstimate } from '../../src/audit/live/heap-estimate.js';
import { UPSTREAM_MAX_PAGE_SIZE } from '../../src/audit/paging/limits.js';
import { LIVE_PAGES_IN_FLIGHT, MAX_PAGES_PER_READ, ReadBudget, readWindow } from '../../src/audit/live/window-read.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';
import type { AuditRowResult, IdentityApi } from '../../src/upstream/types.js';
import { auditRecord, fakeIdentity, memoryLogger } from './fake-identity.js';

const start = Date.UTC(2026, 10, 23, 12, 0, 0);
const roomy = () => new ReadBudget(64 * 1024 * 1024);

describe('readWindow', () => {
  it('pages with the window pinned until a short page, and returns the records oldest first', async () => {
    const identity = fakeIdentity(Array.from({ length: 5 }, (_, i) => auditRecord(i, start + i)));
    const { log, memory } = memoryLogger();
    const signal = new AbortController().signal;
    const records = (await readWindow({
      identity,
      budget: roomy(),
      filter: { objectType: 'LOGIN', action: 'Create' },
      fromMillis: start,
      toMillis: start + 100,
      log,
      signal,
      pageSize: 2,
    })).records;
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
    const { records } = await readWindow({ identity, budget: roomy(), filter: {}, fromMillis: start, toMillis: start + 100, log, pageSize: 2 });
    expect(records).toHaveLength(4);
    expect(identity.queries.map((q) => q.startIndex)).toEqual([0, 2, 4]);
    expect(identity.signals).toEqual([undefined, undefined, undefined]);

    const whole = fakeIdentity([auditRecord(1, start)]);
    await readWindow({ identity: whole, budget: roomy(), filter: {}, fromMillis: start, toMillis: start, log });
    expect(whole.queries.map((q) => q.pageSize)).toEqual([UPSTREAM_MAX_PAGE_SIZE]);
    expect(UPSTREAM_MAX_PAGE_SIZE).toBe(5000);
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
    const budget = roomy();
    const { records } = await readWindow({ identity, budget, filter: {}, fromMillis: start, toMillis: start + 10, log, pageSize: 2 });
    expect(records.map((r) => r.uuid)).toEqual(['uuid-oldest', 'uuid-shifted', 'uuid-newest']);
    // Held once: as much as the same three records read without the repeat.
    const once: IdentityApi = { auditReport: async () => ({ rows: [...pages[0]!, pages[1]![1]!] }) };
    const single = roomy();
    await readWindow({ identity: once, budget: single, filter: {}, fromMillis: start, toMillis: start + 10, log, pageSize: 4 });
    expect(budget.bytes).toBe(single.bytes);
  });

  it('skips unreadable rows, keeps paging past them, and says how many in one warning', async () => {
    const identity = fakeIdentity([auditRecord(1, start)]);
    identity.unreadable = 2;
    const { log, memory } = memoryLogger();
    const { records } = await readWindow({ identity, budget: roomy(), filter: {}, fromMillis: start, toMillis: start, log, pageSize: 2 });
    expect(records.map((r) => r.uuid)).toEqual(['uuid-1']);
    expect(identity.queries).toHaveLength(2);
    expect(memory.lines()).toEqual([expect.objectContaining({ level: 40, unreadable: 2, msg: 'live audit rows skipped: records unreadable' })]);
  });

  it(`fails with UPSTREAM_INVALID_RESPONSE when the rows do not run out within ${MAX_PAGES_PER_READ} pages, holding nothing after`, async () => {
    const identity = fakeIdentity(Array.from({ length: MAX_PAGES_PER_READ + 5 }, (_, i) => auditRecord(i, start + i)));
    const { log } = memoryLogger();
    const budget = roomy();
    const failure = await readWindow({ identity, budget, filter: {}, fromMillis: start, toMillis: start + 1000, log, pageSize: 1 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({
      code: 'UPSTREAM_INVALID_RESPONSE',
      message: `The identity service's audit report did not end within ${MAX_PAGES_PER_READ} pages.`,
      detail: { service: 'identity', pages: MAX_PAGES_PER_READ },
    });
    expect(identity.queries).toHaveLength(MAX_PAGES_PER_READ);
    expect(MAX_PAGES_PER_READ).toBe(40);
    expect(budget.bytes).toBe(0);
  });

  it('says nothing when the last page it may read is also the last one there is', async () => {
    const identity = fakeIdentity(Array.from({ length: MAX_PAGES_PER_READ - 1 }, (_, i) => auditRecord(i, start + i)));
    const { log, memory } = memoryLogger();
    await readWindow({ identity, budget: roomy(), filter: {}, fromMillis: start, toMillis: start + 1000, log, pageSize: 1 });
    expect(identity.queries).toHaveLength(MAX_PAGES_PER_READ);
    expect(memory.lines()).toEqual([]);
  });
});

/** A page of `count` records stamped inside the window, each with a 1000-character value. */
function largeRecords(prefix: string, count: number, newest: number): AuditRowResult[] {
  return Array.from({ length: count }, (_, i) => ({
    ok: true,
    record: { ...auditRecord(`${prefix}-${i}`, newest - (i % 1000)), values: { pad: 'x'.repeat(1000) } },
  }));
}

describe('readWindow within its memory bound', () => {
  it('leaves out records stamped outside the window, and says how many in one warning without their content', async () => {
    const identity = fakeIdentity();
    const inside = [auditRecord('inside', start + 5)];
    const answer: IdentityApi = {
      auditReport: async (query) => {
        const { rows } = await identity.auditReport(query, { log: memoryLogger().log });
        const future = auditRecord('future', start + 10 * 365 * 86_400_000);
        const past = auditRecord('past', -8.64e15);
        return { rows: [{ ok: true, record: future }, ...rows, { ok: true, record: past }, { ok: true, record: { ...past, uuid: 'uuid-past-2' } }] };
      },
    };
    identity.records.push(...inside);
    const { log, memory } = memoryLogger();
    const { records, complete } = await readWindow({ identity: answer, budget: roomy(), filter: {}, fromMillis: start, toMillis: start + 10, log, pageSize: 10 });
    expect(records.map((r) => r.uuid)).toEqual(['uuid-inside']);
    expect(complete).toBe(true);
    const lines = memory.lines();
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, earlier: 2, later: 1, fromMillis: start, toMillis: start + 10, msg: 'live audit rows skipped: stamped outside the window read' }),
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/uuid-(future|past)/);
  });

  it('keeps the oldest records that fit, leaves out every newer one, and gives its bytes back on release', async () => {
    const identity = fakeIdentity(Array.from({ length: 50 }, (_, i) => auditRecord(i, start + i)));
    const { log, memory } = memoryLogger();
    const whole = await readWindow({ identity, budget: roomy(), filter: {}, fromMillis: start, toMillis: start + 100, log, pageSize: 7 });
    expect(whole.complete).toBe(true);
    // Room for about 20 of these records: the read is cut, pages still read newest first to the end.
    const budget = new ReadBudget(20 * 700);
    const part = await readWindow({ identity, budget, filter: {}, fromMillis: start, toMillis: start + 100, log, pageSize: 7 });
    expect(part.complete).toBe(false);
    expect(part.records.length).toBeGreaterThan(5);
    expect(part.records.length).toBeLessThan(50);
    expect(part.records.map((r) => r.uuid)).toEqual(whole.records.slice(0, part.records.length).map((r) => r.uuid));
    expect(budget.bytes).toBeGreaterThan(0);
    expect(budget.bytes).toBeLessThanOrEqual(budget.max);
    part.release();
    part.release();
    expect(budget.bytes).toBe(0);
    expect(memory.lines()).toEqual([
      expect.objectContaining({ level: 30, records: part.records.length, limitBytes: budget.max, msg: 'live audit read kept part of its window: memory bound' }),
    ]);
  });

  it('once it has left a record out, keeps no newer one a later page brings (records shifted by new ones): no gap', async () => {
    // Large records: each costs more than the keys a read sees first, so room for one record more is room for one.
    const r = (n: number) => ({ ...auditRecord(n, start + n), objectName: 'x'.repeat(2000) }) as AuditRecord;
    const { log } = memoryLogger();
    const heldFor = async (rows: AuditRowResult[]) => {
      const budget = roomy();
      await readWindow({ identity: { auditReport: async () => ({ rows }) }, budget, filter: {}, fromMillis: start, toMillis: start + 10, log, pageSize: 10 });
      return budget.bytes;
    };
    const first = await heldFor([{ ok: true, record: r(6) }]);
    const other = (await heldFor([{ ok: true, record: r(6) }, { ok: true, record: r(5) }])) - first;
    const limit = 1024 * 1024;
    const budget = new ReadBudget(limit);
    // Another read holds all but the first page's room: the second page is kept in place of the first's
    // newest (r5 left out, r6 with it); then the other read lets go.
    const blocker = limit - first - other;
    const blocking = budget.holding();
    expect(blocking.add(blocker)).toBe(true);
    const pages: AuditRowResult[][] = [
      [{ ok: true, record: r(6) }, { ok: true, record: r(5) }],
      [{ ok: true, record: r(4) }, { ok: true, record: r(3) }],
      // Three new records pushed r6 down to here; r5, left out, did not come back.
      [{ ok: true, record: r(6) }, { ok: true, record: r(2) }],
      [],
    ];
    const identity: IdentityApi = {
      auditReport: async (query) => {
        const page = query.startIndex / 2;
        if (page === 2) blocking.release();
        return { rows: pages[page]! };
      },
    };
    const part = await readWindow({ identity, budget, filter: {}, fromMillis: start, toMillis: start + 10, log, pageSize: 2 });
    expect(part.complete).toBe(false);
    expect(part.records.map((record) => record.uuid)).toEqual(['uuid-2', 'uuid-3', 'uuid-4']);
  });

  it('skips the records its caller knows: they take no room, and the rest of the window fits', async () => {
    const identity = fakeIdentity(Array.from({ length: 50 }, (_, i) => auditRecord(i, start + i)));
    const { log } = memoryLogger();
    const budget = new ReadBudget(20 * 700);
    const known = new Set(Array.from({ length: 40 }, (_, i) => `uuid-${i}`));
    const part = await readWindow({ identity, budget, filter: {}, fromMillis: start, toMillis: start + 100, log, known: (r) => known.has(r.uuid) });
    expect(part.complete).toBe(true);
    expect(part.records.map((r) => r.uuid)).toEqual(Array.from({ length: 10 }, (_, i) => `uuid-${40 + i}`));
  });

  it('an upstream answering endless full pages of large records: UPSTREAM_INVALID_RESPONSE, never more held than the bound', async () => {
    const budget = new ReadBudget(2 * 1024 * 1024);
    let pages = 0;
    let mostHeld = 0;
    const identity: IdentityApi = {
      auditReport: async (query) => {
        mostHeld = Math.max(mostHeld, budget.bytes);
        pages++;
        return { rows: largeRecords(`page${pages}`, query.pageSize, query.toMillis - 1) };
      },
    };
    const { log } = memoryLogger();
    const failure = await readWindow({ identity, budget, filter: {}, fromMillis: start, toMillis: start + 5000, log, pageSize: 500 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE' });
    expect(pages).toBe(MAX_PAGES_PER_READ);
    // 20,000 records of about 2 KB were read; at most the bound was held, and nothing once failed.
    expect(mostHeld).toBeGreaterThan(budget.max / 2);
    expect(mostHeld).toBeLessThanOrEqual(budget.max);
    expect(budget.bytes).toBe(0);
  });

  it('reads sharing one budget hold no more than it together; one that can keep nothing fails with RATE_LIMITED', async () => {
    const budget = new ReadBudget(1024 * 1024);
    const identity: IdentityApi = { auditReport: async (query) => ({ rows: largeRecords(`${query.fromMillis}`, 400, start + 100) }) };
    const { log } = memoryLogger();
    const first = await readWindow({ identity, budget, filter: {}, fromMillis: start - 1000, toMillis: start + 1000, log, pageSize: 500 });
    const second = await readWindow({ identity, budget, filter: {}, fromMillis: start - 999, toMillis: start + 1000, log, pageSize: 500 });
    // The first fits whole; the second only in part, in what the first left.
    expect(first.complete).toBe(true);
    expect(second.complete).toBe(false);
    expect(second.records.length).toBeGreaterThan(0);
    expect(second.records.length).toBeLessThan(400);
    expect(budget.bytes).toBeLessThanOrEqual(budget.max);
    const third = await readWindow({ identity, budget, filter: {}, fromMillis: start - 998, toMillis: start + 1000, log, pageSize: 500 }).catch((e: unknown) => e);
    expect(third).toMatchObject({
      code: 'RATE_LIMITED',
      message: 'The gateway is reading as many live audit records as it may hold; try again later.',
      detail: { limitBytes: budget.max },
    });
    first.release();
    second.release();
    expect(budget.bytes).toBe(0);
  });

  it(`reads sharing one budget have at most ${LIVE_PAGES_IN_FLIGHT} pages in flight; one whose caller leaves while it waits stops`, async () => {
    const budget = roomy();
    const identity = fakeIdentity([auditRecord(1, start)]);
    identity.hold();
    const { log } = memoryLogger();
    const read = (signal?: AbortSignal) =>
      readWindow({ identity, budget, filter: {}, fromMillis: start, toMillis: start, log, ...(signal ? { signal } : {}) });
    const reads = Array.from({ length: LIVE_PAGES_IN_FLIGHT + 1 }, () => read());
    const leaving = new AbortController();
    const left = read(leaving.signal).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(identity.queries).toHaveLength(LIVE_PAGES_IN_FLIGHT);
    leaving.abort();
    expect(await left).toMatchObject({ name: 'CallerGoneError', detail: { upstream: 'identity', waitedFor: 'live-audit-read-turn' } });
    identity.open();
    for (const part of await Promise.all(reads)) expect(part.records.map((r) => r.uuid)).toEqual(['uuid-1']);
    expect(identity.queries).toHaveLength(LIVE_PAGES_IN_FLIGHT + 1);
  });

  it('a read aborted midway gives back what it held', async () => {
    const budget = roomy();
    const controller = new AbortController();
    const identity: IdentityApi = {
      auditReport: async (query) => {
        if (query.startIndex > 0) {
          controller.abort();
          throw new Error('aborted');
        }
        return { rows: largeRecords('a', query.pageSize, start + 100) };
      },
    };
    const { log } = memoryLogger();
    await expect(readWindow({ identity, budget, filter: {}, fromMillis: start, toMillis: start + 1000, log, signal: controller.signal, pageSize: 10 })).rejects.toThrow('aborted');
    expect(budget.bytes).toBe(0);
  });
});

describe('HeapEstimate', () => {
  it('counts characters by their width, and a key as new only the first time a read sees it', () => {
    const estimate = new HeapEstimate();
    const record = (values: Record<string, unknown>) => ({ ...auditRecord(1, start), values });
    estimate.valueBytes(record({ pad: '' }));
    const latin = estimate.valueBytes(record({ pad: 'x'.repeat(1000) }));
    const wide = estimate.valueBytes(record({ pad: '\u20ac'.repeat(1000) }));
    expect(wide - latin).toBe(1000);
    const firstKeys = estimate.valueBytes(record({ newKey: 1 }));
    const sameKeys = estimate.valueBytes(record({ newKey: 1 }));
    expect(firstKeys).toBeGreaterThan(sameKeys + 100);
    expect(estimate.valueBytes(record({ big: 'x'.repeat(1_000_000) }))).toBeGreaterThan(1_000_000);
  });

  /** What one more value costs a record whose keys the estimate has seen. */
  const costOf = (values: Record<string, unknown>, more: Record<string, unknown>) => {
    const estimate = new HeapEstimate();
    const record = (v: Record<string, unknown>) => ({ ...auditRecord(1, start), values: v });
    estimate.valueBytes(record({ ...values, ...more }));
    return estimate.valueBytes(record({ ...values, ...more })) - estimate.valueBytes(record(values));
  };

  it('counts a number, and nothing but its property for a boolean or null', () => {
    expect(costOf({}, { n: 1 })).toBeGreaterThan(costOf({}, { n: true }));
    expect(costOf({}, { n: true })).toBe(costOf({}, { n: null }));
    expect(costOf({}, { n: true })).toBeGreaterThan(0);
  });

  it('counts every element of an array, and below it, for less than an object with the same members', () => {
    const three = costOf({}, { list: [1, 2, 3] });
    expect(three).toBeGreaterThan(costOf({}, { list: [1, 2] }) + costOf({}, { n: 1 }) - costOf({}, { n: true }));
    expect(costOf({}, { list: [{ deep: 'x'.repeat(1000) }] })).toBeGreaterThan(1000);
    expect(three).toBeLessThan(costOf({}, { list: { 0: 1, 1: 2, 2: 3 } }));
    expect(costOf({}, { list: [] })).toBeLessThan(costOf({}, { list: {} }));
  });

  it('counts every property more once an object has more than 127 (a dictionary, by measurement)', () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, true]));
    const perProperty = (n: number) => costOf({}, { object: keys(n) }) / n;
    expect(perProperty(127)).toBeLessThan(perProperty(126) + 1);
    expect(perProperty(128)).toBeGreaterThan(perProperty(127) * 1.5);
  });

  it('counts a key it has not seen by its length', () => {
    const estimate = new HeapEstimate();
    const record = (v: Record<string, unknown>) => ({ ...auditRecord(1, start), values: v });
    const base = estimate.valueBytes(record({}));
    const short = estimate.valueBytes(record({ a: true })) - base;
    const long = estimate.valueBytes(record({ ['b'.repeat(1000)]: true })) - base;
    expect(long - short).toBe(999);
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
