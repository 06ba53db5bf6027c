/**
 * One filter's poller driven directly over an in-memory identity service, with fake timers: the
 * window each poll reads, what it hands its subscribers, when it stops, and upstream failures.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewayError, UpstreamError } from '../../src/errors.js';
import { asGatewayError, FilterPoller, type PollerOptions } from '../../src/live/poller.js';
import { filterKey, type LiveFilter, type LiveRecord } from '../../src/live/records.js';
import type { LiveSubscriber } from '../../src/live/subscriber.js';
import { auditRecord, fakeIdentity, memoryLogger, type FakeIdentity } from './fake-identity.js';

const start = Date.UTC(2026, 10, 23, 12, 0, 0);
const POLL_MS = 100;
const SETTLE_MS = 5000;
const GIVE_UP_MS = 1000;
const filter: LiveFilter = { objectType: 'LOGIN', action: undefined };

/** A subscriber as the poller sees it: what it was offered, and how it was failed. */
function fakeSubscriber(floor = start) {
  const offered: string[][] = [];
  const failures: GatewayError[] = [];
  const subscriber = {
    floor,
    offer: (records: readonly LiveRecord[]) => offered.push(records.map((r) => r.uuid)),
    fail: (error: GatewayError) => failures.push(error),
  };
  return { subscriber: subscriber as unknown as LiveSubscriber, offered, failures };
}

function poller(identity: FakeIdentity, options: Partial<PollerOptions> = {}, floor = start) {
  const { log, memory } = memoryLogger();
  const stopped: FilterPoller[] = [];
  const created = new FilterPoller(filterKey(filter), filter, floor, {
    identity,
    log,
    pollMs: POLL_MS,
    settleMs: SETTLE_MS,
    giveUpMs: GIVE_UP_MS,
    now: () => Date.now(),
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
      fail: () => {},
    };
    p.add(cutOff as unknown as LiveSubscriber);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(stopped).toEqual([p]);
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
    expect(memory.lines().filter((line) => line.level === 50)).toEqual([
      expect.objectContaining({ code: 'UPSTREAM_UNAUTHORIZED', msg: 'live audit poller gave up: upstream failing' }),
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
      fail: () => p.remove(leaving as unknown as LiveSubscriber),
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
