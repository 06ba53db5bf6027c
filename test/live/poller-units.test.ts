/**
 * One filter's poller driven directly over an in-memory identity service, with fake timers: the
 * window each poll reads, what it hands its subscribers, when it stops, and upstream failures.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewayError, UpstreamError } from '../../src/lib/errors.js';
import { asGatewayError, FilterPoller, type PollerOptions } from '../../src/audit/live/poller.js';
import { HeapEstimate } from '../../src/audit/live/heap-estimate.js';
import { ReadBudget } from '../../src/audit/live/window-read.js';
import { type LiveFilter, type LiveRecord } from '../../src/audit/live/records.js';
import type { LiveSubscriber } from '../../src/audit/live/subscriber.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';
import type { IdentityApi } from '../../src/upstream/types.js';
import { auditRecord, fakeIdentity, memoryLogger, type FakeIdentity } from './fake-identity.js';

const start = Date.UTC(2026, 10, 23, 12, 0, 0);
const POLL_MS = 100;
const SETTLE_MS = 5000;
const GIVE_UP_MS = 1000;
const filter: LiveFilter = { objectType: 'LOGIN', action: undefined };

/** A subscriber as the poller sees it: what it was offered, and how it was ended. */
function fakeSubscriber(floor = start) {
  const offered: string[][] = [];
  const failures: GatewayError[] = [];
  const subscriber = {
    floor,
    offer: (records: readonly LiveRecord[]) => offered.push(records.map((r) => r.uuid)),
    end: (error: GatewayError) => failures.push(error),
  };
  return { subscriber: subscriber as unknown as LiveSubscriber, offered, failures };
}

function poller(identity: IdentityApi, options: Partial<PollerOptions> = {}, floor = start) {
  const { log, memory } = memoryLogger();
  const stopped: FilterPoller[] = [];
  const created = new FilterPoller(filter, floor, {
    identity,
    log,
    pollMs: POLL_MS,
    settleMs: SETTLE_MS,
    giveUpMs: GIVE_UP_MS,
    now: () => Date.now(),
    budget: new ReadBudget(64 * 1024 * 1024),
    onStop: (p) => stopped.push(p),
    ...options,
  });
  return { poller: created, stopped, memory };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: start });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('polling', () => {
  it('starts with its first subscriber, polls once per interval however many join, and reads from the floor to now', async () => {
    const identity = fakeIdentity();
    const { poller: p } = poller(identity);
    await vi.advanceTimersByTimeAsync(5 * POLL_MS);
    expect(identity.queries).toEqual([]);
    p.add(fakeSubscriber().subscriber);
    p.add(fakeSubscriber().subscriber);
    expect(p.subscriberCount).toBe(2);
    await vi.advanceTimersByTimeAsync(POLL_MS - 1);
    expect(identity.queries).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(identity.queries).toEqual([
      { fromMillis: start, toMillis: start + 6 * POLL_MS, objectType: 'LOGIN', action: undefined, pageSize: 5000, startIndex: 0 },
    ]);
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(identity.queries).toHaveLength(3);
    expect(p.polls).toBe(3);
    p.stop();
  });

  it('hands each record to every subscriber once, oldest first, and reads on from the settle time before the newest', async () => {
    const identity = fakeIdentity([auditRecord(2, start + 20), auditRecord(1, start + 10), auditRecord('other', start + 5, 'GROUP')]);
    const { poller: p } = poller(identity, { pageSize: 7 });
    const a = fakeSubscriber();
    const b = fakeSubscriber();
    p.add(a.subscriber);
    p.add(b.subscriber);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(identity.queries[0]!.pageSize).toBe(7);
    expect(a.offered).toEqual([['uuid-1', 'uuid-2']]);
    expect(b.offered).toEqual([['uuid-1', 'uuid-2']]);
    // The next window starts at the floor still (newest - settle is before it), and re-reads both.
    identity.records.push(auditRecord(3, start + 150));
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(identity.queries[1]!.fromMillis).toBe(start);
    expect(a.offered).toEqual([['uuid-1', 'uuid-2'], ['uuid-3']]);
    // Nothing new: nothing offered.
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(a.offered).toHaveLength(2);
    // Once the newest is more than the settle time past the floor, the window starts settle before it.
    const late = start + 3 * SETTLE_MS;
    vi.setSystemTime(late + 100);
    identity.records.push(auditRecord(4, late));
    await vi.advanceTimersByTimeAsync(POLL_MS);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(identity.queries.at(-1)!.fromMillis).toBe(late - SETTLE_MS);
    // A record ingested late, stamped at that start, is still delivered, once.
    identity.records.push(auditRecord('late', late - SETTLE_MS));
    await vi.advanceTimersByTimeAsync(POLL_MS);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(a.offered).toEqual([['uuid-1', 'uuid-2'], ['uuid-3'], ['uuid-4'], ['uuid-late']]);
    // The late record does not move the window back.
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(identity.queries.at(-1)!.fromMillis).toBe(late - SETTLE_MS);
    p.stop();
  });

  it('a subscriber given an earlier floor lowers the window for the next poll', async () => {
    const identity = fakeIdentity();
    const { poller: p } = poller(identity);
    p.add(fakeSubscriber(start).subscriber);
    p.add(fakeSubscriber(start - 700).subscriber);
    p.add(fakeSubscriber(start - 300).subscriber);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(identity.queries[0]!.fromMillis).toBe(start - 700);
    p.stop();
  });

  it('makes no upstream call for a window that starts after now, and reads one that starts at now', async () => {
    const identity = fakeIdentity();
    const future = poller(identity, {}, start + POLL_MS + 1);
    const early = fakeSubscriber(start + POLL_MS + 1);
    future.poller.add(early.subscriber);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(future.poller.polls).toBe(1);
    expect(identity.queries).toEqual([]);
    expect(early.offered).toEqual([]);
    // The next poll's now reaches the floor.
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(identity.queries).toEqual([expect.objectContaining({ fromMillis: start + POLL_MS + 1, toMillis: start + 2 * POLL_MS })]);
    future.poller.stop();

    vi.setSystemTime(start);
    const exact = fakeIdentity();
    const atNow = poller(exact, {}, start + POLL_MS);
    atNow.poller.add(fakeSubscriber(start + POLL_MS).subscriber);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(exact.queries).toEqual([expect.objectContaining({ fromMillis: start + POLL_MS, toMillis: start + POLL_MS })]);
    atNow.poller.stop();
  });
});

/** Every uuid offered, in order. */
const offeredUuids = (offered: string[][]) => offered.flat();

/** `identity`'s answers, with `extra` records added to the first page of every read whatever its window. */
function withRecordsOutsideWindows(identity: FakeIdentity, extra: () => AuditRecord[]): IdentityApi {
  return {
    async auditReport(query, call) {
      const page = await identity.auditReport(query, call);
      if (query.startIndex > 0) return page;
      return { rows: [...extra().map((record) => ({ ok: true as const, record })), ...page.rows] };
    },
  };
}

describe('records outside the window read', () => {
  it('a record stamped ten years ahead is not delivered and does not stall the poller: later records arrive, each once', async () => {
    const identity = fakeIdentity([auditRecord('first', start + 10)]);
    const future = auditRecord('future', start + 10 * 365 * 86_400_000);
    const { poller: p, memory } = poller(withRecordsOutsideWindows(identity, () => [future]));
    const a = fakeSubscriber();
    p.add(a.subscriber);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(a.offered).toEqual([['uuid-first']]);
    const later = Array.from({ length: 20 }, (_, i) => `uuid-later-${i}`);
    for (let i = 0; i < later.length; i++) {
      identity.records.push(auditRecord(`later-${i}`, Date.now()));
      await vi.advanceTimersByTimeAsync(POLL_MS);
    }
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(offeredUuids(a.offered)).toEqual(['uuid-first', ...later]);
    // Every read reached up to now, and none started after it.
    expect(identity.queries.every((q) => q.fromMillis <= q.toMillis && q.toMillis <= Date.now())).toBe(true);
    expect(identity.queries.at(-1)!.toMillis).toBe(Date.now());
    const warnings = memory.lines().filter((line) => line.msg === 'live audit rows skipped: stamped outside the window read');
    expect(warnings).toHaveLength(identity.queries.length);
    expect(warnings[0]).toMatchObject({ level: 40, earlier: 0, later: 1 });
    expect(JSON.stringify(warnings)).not.toContain('uuid-future');
    p.stop();
  });

  it('a record stamped 5 s ahead (clock skew) loses nothing: it is delivered once its time has come, every other record too', async () => {
    const settleMs = 1000;
    const identity = fakeIdentity();
    const skewed = auditRecord('skewed', start + 5000);
    const { poller: p } = poller(withRecordsOutsideWindows(identity, () => [skewed]), { settleMs });
    const a = fakeSubscriber();
    p.add(a.subscriber);
    const produced: string[] = [];
    // A record every 250 ms for 11 s, polled every 100 ms.
    for (let i = 0; i < 44; i++) {
      identity.records.push(auditRecord(`r-${i}`, Date.now()));
      produced.push(`uuid-r-${i}`);
      await vi.advanceTimersByTimeAsync(250);
    }
    await vi.advanceTimersByTimeAsync(POLL_MS);
    const delivered = offeredUuids(a.offered);
    expect(delivered.filter((uuid) => uuid !== 'uuid-skewed')).toEqual(produced);
    expect(delivered.filter((uuid) => uuid === 'uuid-skewed')).toHaveLength(1);
    // Delivered by the first read whose window held it.
    const at = delivered.indexOf('uuid-skewed');
    expect(delivered[at - 1]).toBe('uuid-r-19');
    expect(delivered[at + 1]).toBe('uuid-r-20');
    p.stop();
  });
});

describe('the memory bound of live reads', () => {
  it('a window larger than the reads may hold is delivered in parts, oldest first, each record once', async () => {
    const identity = fakeIdentity(Array.from({ length: 300 }, (_, i) => auditRecord(String(i).padStart(3, '0'), start - 300 + i)));
    const estimate = new HeapEstimate();
    estimate.valueBytes(identity.records[0]!);
    const recordBytes = estimate.valueBytes(identity.records[1]!);
    const budget = new ReadBudget(100 * recordBytes);
    const { poller: p } = poller(identity, { budget, pageSize: 50 }, start - 1000);
    const a = fakeSubscriber(start - 1000);
    p.add(a.subscriber);
    await vi.advanceTimersByTimeAsync(20 * POLL_MS);
    expect(a.offered.length).toBeGreaterThan(2);
    for (const batch of a.offered) expect(batch.length).toBeLessThanOrEqual(100);
    expect(offeredUuids(a.offered)).toEqual(identity.records.map((r) => r.uuid));
    expect(budget.bytes).toBe(0);
    p.stop();
  });

  it('so are many records of one instant, by uuid', async () => {
    const instant = start + 50;
    const identity = fakeIdentity(Array.from({ length: 300 }, (_, i) => auditRecord(String(i).padStart(3, '0'), instant)));
    const { poller: p } = poller(identity, { budget: new ReadBudget(100 * 700), pageSize: 1000 });
    const a = fakeSubscriber();
    p.add(a.subscriber);
    await vi.advanceTimersByTimeAsync(20 * POLL_MS);
    expect(a.offered.length).toBeGreaterThan(2);
    expect(offeredUuids(a.offered)).toEqual(identity.records.map((r) => r.uuid));
    p.stop();
  });

  it('an upstream answering endless full pages: each poll fails, holding at most the bound, until the streams end with UPSTREAM_INVALID_RESPONSE', async () => {
    const budget = new ReadBudget(200 * 1024);
    let mostHeld = 0;
    let served = 0;
    const hostile: IdentityApi = {
      async auditReport(query) {
        mostHeld = Math.max(mostHeld, budget.bytes);
        const rows = Array.from({ length: query.pageSize }, (_, i) => ({
          ok: true as const,
          record: { ...auditRecord(`hostile-${served++}`, query.toMillis - (i % 50)), values: { pad: 'x'.repeat(1000) } },
        }));
        return { rows };
      },
    };
    const { poller: p, stopped, memory } = poller(hostile, { budget, pageSize: 100 });
    const a = fakeSubscriber(start - 1000);
    p.add(a.subscriber);
    await vi.advanceTimersByTimeAsync(GIVE_UP_MS + POLL_MS);
    expect(a.offered).toEqual([]);
    expect(a.failures.map((e) => e.code)).toEqual(['UPSTREAM_INVALID_RESPONSE']);
    expect(stopped).toEqual([p]);
    expect(memory.lines().find((line) => line.msg === 'live audit poll failed; retrying')).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE' });
    // 4000 records of about 2 KB a poll: the reads held up to the bound, never more, and nothing now.
    expect(served).toBeGreaterThan(40_000);
    expect(mostHeld).toBeGreaterThan(budget.max / 2);
    expect(mostHeld).toBeLessThanOrEqual(budget.max);
    expect(budget.bytes).toBe(0);
  });
});

describe('stopping', () => {
  it('stops with its last subscriber, not before, and a stranger leaving changes nothing', async () => {
    const identity = fakeIdentity();
    const { poller: p, stopped } = poller(identity);
    const a = fakeSubscriber();
    const b = fakeSubscriber();
    p.add(a.subscriber);
    p.add(b.subscriber);
    p.remove(a.subscriber);
    p.remove(a.subscriber);
    p.remove(fakeSubscriber().subscriber);
    expect(stopped).toEqual([]);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(identity.queries).toHaveLength(1);
    p.remove(b.subscriber);
    expect(stopped).toEqual([p]);
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(identity.queries).toHaveLength(1);
    // Stopped for good: a late subscriber does not restart it, and stop is reported once.
    p.add(fakeSubscriber().subscriber);
    p.stop();
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(identity.queries).toHaveLength(1);
    expect(stopped).toEqual([p]);
  });

  it('aborts a read in flight and hands out nothing it brings back', async () => {
    const identity = fakeIdentity([auditRecord(1, start + 10)]);
    const { poller: p } = poller(identity);
    const a = fakeSubscriber();
    p.add(a.subscriber);
    identity.hold();
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(identity.signals[0]!.aborted).toBe(false);
    p.stop();
    expect(identity.signals[0]!.aborted).toBe(true);
    identity.open();
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(a.offered).toEqual([]);
    expect(identity.queries).toHaveLength(1);
  });

  it('a read that fails after the stop neither fails its subscribers nor polls again', async () => {
    const identity = fakeIdentity();
    const { poller: p, memory } = poller(identity, { giveUpMs: 0 });
    const a = fakeSubscriber();
    p.add(a.subscriber);
    identity.hold();
    identity.failWith = new Error('connection reset');
    await vi.advanceTimersByTimeAsync(POLL_MS);
    p.stop();
    identity.open();
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(a.failures).toEqual([]);
    expect(identity.queries).toHaveLength(1);
    expect(memory.lines().filter((line) => line.level >= 40)).toEqual([]);
  });

  it('stops for good when its last subscriber leaves while being handed records (a slow client cut off)', async () => {
    const identity = fakeIdentity([auditRecord(1, start + 10)]);
    const { poller: p, stopped } = poller(identity);
    const cutOff = {
      floor: start,
      offer: () => p.remove(cutOff as unknown as LiveSubscriber),
      end: () => {},
    };
    p.add(cutOff as unknown as LiveSubscriber);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(stopped).toEqual([p]);
    // No poll is left scheduled: nothing keeps a timer for a poller that is gone.
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(identity.queries).toHaveLength(1);
  });
});

describe('upstream failures', () => {
  it('are retried at each interval, invisible to subscribers, until the upstream has failed for giveUpMs', async () => {
    const identity = fakeIdentity([auditRecord(1, start + 10)]);
    const { poller: p, stopped, memory } = poller(identity);
    const a = fakeSubscriber();
    const b = fakeSubscriber();
    p.add(a.subscriber);
    p.add(b.subscriber);
    identity.failWith = new UpstreamError('UPSTREAM_UNAUTHORIZED', 'identity', 'refused');
    // First failure at +100; the poll at +1000 has failed for 900 ms: still retrying.
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(identity.queries).toHaveLength(10);
    expect(a.failures).toEqual([]);
    const warnings = memory.lines().filter((line) => line.level === 40);
    expect(warnings).toHaveLength(10);
    expect(warnings[0]).toMatchObject({ code: 'UPSTREAM_UNAUTHORIZED', filter: { objectType: 'LOGIN' }, msg: 'live audit poll failed; retrying' });
    // At +1100 it has failed for exactly giveUpMs: every stream gets the error, and polling stops.
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(a.failures.map((e) => e.code)).toEqual(['UPSTREAM_UNAUTHORIZED']);
    expect(b.failures.map((e) => e.code)).toEqual(['UPSTREAM_UNAUTHORIZED']);
    expect(stopped).toEqual([p]);
    expect(memory.lines().filter((line) => line.level === 50)).toEqual([]);
    expect(memory.lines().filter((line) => line.msg === 'live audit poller gave up: upstream failing')).toEqual([
      expect.objectContaining({ level: 40, code: 'UPSTREAM_UNAUTHORIZED' }),
    ]);
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(identity.queries).toHaveLength(11);
  });

  it('a successful poll starts the count again', async () => {
    const identity = fakeIdentity([auditRecord(1, start + 10)]);
    const { poller: p, stopped } = poller(identity);
    const a = fakeSubscriber();
    p.add(a.subscriber);
    identity.failWith = new Error('reset');
    await vi.advanceTimersByTimeAsync(9 * POLL_MS);
    identity.failWith = undefined;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(a.offered).toEqual([['uuid-1']]);
    identity.failWith = new Error('reset');
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(a.failures).toEqual([]);
    expect(stopped).toEqual([]);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(a.failures.map((e) => e.code)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });

  it('a subscriber that leaves while the poller gives up does not keep the others from their error', async () => {
    const identity = fakeIdentity();
    const { poller: p } = poller(identity, { giveUpMs: 0 });
    const b = fakeSubscriber();
    const leaving = {
      floor: start,
      offer: () => {},
      end: () => p.remove(leaving as unknown as LiveSubscriber),
    };
    p.add(leaving as unknown as LiveSubscriber);
    p.add(b.subscriber);
    identity.failWith = new Error('reset');
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(b.failures.map((e) => e.code)).toEqual(['UPSTREAM_UNAVAILABLE']);
  });
});

describe('asGatewayError', () => {
  it('keeps a contract error, and makes anything else UPSTREAM_UNAVAILABLE with its message for the log', () => {
    const contract = new UpstreamError('UPSTREAM_INVALID_RESPONSE', 'identity', 'bad');
    expect(asGatewayError(contract)).toBe(contract);
    const fromError = asGatewayError(new Error('socket hang up'));
    expect(fromError).toBeInstanceOf(UpstreamError);
    expect(fromError).toMatchObject({ service: 'identity', code: 'UPSTREAM_UNAVAILABLE', message: 'The identity service could not be read.', detail: { cause: 'socket hang up' } });
    expect(asGatewayError('timeout')).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', detail: { cause: 'timeout' } });
  });
});
