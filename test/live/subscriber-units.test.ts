/**
 * One live subscription driven directly, without a server: exactly-once delivery, its floor and
 * settle bound, resume tokens, the catch-up hand-over, and clients that stop reading or leave.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../src/lib/errors.js';
import { digestOf, filterKey as keyOf, toLiveRecord } from '../../src/audit/live/records.js';
import { decodeResumeToken } from '../../src/audit/live/resume-token.js';
import { LiveSubscriber, type LiveItem, type SubscriberOptions } from '../../src/audit/live/subscriber.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';

const now = Date.UTC(2026, 10, 23, 12, 0, 0);
const SETTLE_MS = 60_000;
const filterKey = keyOf({ objectType: 'LOGIN', action: undefined });

const record = (id: string | number, timestamp: number) =>
  toLiveRecord({ uuid: `uuid-${id}`, timestamp, objectType: 'LOGIN', objectAction: 'LOGIN' } as unknown as AuditRecord);

function subscribe(options: Partial<SubscriberOptions> = {}) {
  const closed: LiveSubscriber[] = [];
  const subscriber = new LiveSubscriber({
    filterKey,
    floor: now - 10 * SETTLE_MS,
    settleMs: SETTLE_MS,
    maxBuffered: 100,
    now: () => now,
    onClose: (s) => closed.push(s),
    ...options,
  });
  return { subscriber, closed };
}

type Taken = { uuid: string; token: string } | { error: GatewayError } | 'done';

/** What the client reads next, as GraphQL would: the record with its token taken at once. */
async function take(subscriber: LiveSubscriber): Promise<Taken> {
  const next: IteratorResult<LiveItem> = await subscriber.next();
  if (next.done) return 'done';
  const item = next.value;
  if (item.error) return { error: item.error };
  return { uuid: item.record.uuid, token: item.resumeAfter() };
}

async function takeUuids(subscriber: LiveSubscriber, count: number): Promise<string[]> {
  const uuids: string[] = [];
  for (let i = 0; i < count; i++) {
    const taken = await take(subscriber);
    if (taken === 'done' || 'error' in taken) throw new Error(`stream ended after ${uuids.join(', ')}`);
    uuids.push(taken.uuid);
  }
  return uuids;
}

/** Whether a promise has settled once pending callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

/** The next read, if one is ready without waiting for a new record. */
async function ready(subscriber: LiveSubscriber): Promise<Taken | 'waiting'> {
  const next = take(subscriber);
  return (await settled(next)) ? next : 'waiting';
}

afterEach(() => {
  vi.useRealTimers();
});

describe('exactly once', () => {
  it('delivers a record once, whether offered again while it waits or after the client took it', async () => {
    const { subscriber } = subscribe();
    subscriber.offer([record(1, now - 3), record(2, now - 2)]);
    subscriber.offer([record(2, now - 2), record(3, now - 1)]);
    expect(await takeUuids(subscriber, 3)).toEqual(['uuid-1', 'uuid-2', 'uuid-3']);
    subscriber.offer([record(1, now - 3), record(3, now - 1), record(4, now)]);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-4']);
    expect(await ready(subscriber)).toBe('waiting');
    await subscriber.return();
  });

  it('delivers nothing stamped before its floor; a record stamped at the floor is delivered', async () => {
    const floor = now - 1000;
    const { subscriber } = subscribe({ floor });
    subscriber.offer([record('before', floor - 1), record('at', floor), record('after', now)]);
    expect(await takeUuids(subscriber, 2)).toEqual(['uuid-at', 'uuid-after']);
    expect(await ready(subscriber)).toBe('waiting');
    await subscriber.return();
  });

  it('refuses a record older than the settle time before the newest it delivered, not one at that bound', async () => {
    const { subscriber } = subscribe();
    // Nothing delivered yet: only the floor counts, however far apart the records are.
    subscriber.offer([record('new', now), record('old', now - 5 * SETTLE_MS)]);
    expect(await takeUuids(subscriber, 2)).toEqual(['uuid-new', 'uuid-old']);
    // A late record does not move the bound back.
    subscriber.offer([record('too-late', now - SETTLE_MS - 1), record('late', now - SETTLE_MS)]);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-late']);
    subscriber.offer([record('still-too-late', now - SETTLE_MS - 1)]);
    expect(await ready(subscriber)).toBe('waiting');
    await subscriber.return();
  });

  it('still knows a record at the settle bound after it forgets older ones (hundreds of records later)', async () => {
    const { subscriber } = subscribe();
    const edge = record('edge', now - SETTLE_MS);
    subscriber.offer([edge]);
    await takeUuids(subscriber, 1);
    const crowd = Array.from({ length: 300 }, (_, i) => record(i, now));
    subscriber.offer(crowd);
    await takeUuids(subscriber, crowd.length);
    // A poll re-reads the settle time: nothing it brings back is delivered again.
    subscriber.offer([edge, crowd[0]!, crowd[299]!, record('fresh', now)]);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-fresh']);
    expect(await ready(subscriber)).toBe('waiting');
    await subscriber.return();
  });

  it('a resumed stream skips what its predecessor delivered and what lies before its settle bound', async () => {
    const { subscriber } = subscribe({
      floor: now - SETTLE_MS,
      resumedFrom: { newest: now, delivered: [{ digest: digestOf('uuid-1'), timestamp: now }] },
    });
    subscriber.offer([record(1, now), record(2, now - SETTLE_MS - 1), record(3, now - 10)]);
    const taken = await take(subscriber);
    expect(taken).toMatchObject({ uuid: 'uuid-3' });
    const point = decodeResumeToken((taken as { token: string }).token, now);
    expect(point.newest).toBe(now);
    expect(point.delivered.map((entry) => entry.digest).sort()).toEqual([digestOf('uuid-1'), digestOf('uuid-3')].sort());
    expect(await ready(subscriber)).toBe('waiting');
    await subscriber.return();
  });
});

describe('resume tokens', () => {
  it('describe the stream right after their record: newest, floor, issue time and filter', async () => {
    let clock = now;
    const { subscriber } = subscribe({ floor: now - 2 * SETTLE_MS, now: () => clock });
    subscriber.offer([record(1, now - 3 * SETTLE_MS / 2), record(2, now - 1000), record(3, now - 2000)]);
    // Before the settle time has passed since the floor, the floor is the stream's own.
    const [first, second, third] = [await take(subscriber), await take(subscriber), await take(subscriber)] as { token: string }[];
    clock = now + 5;
    const firstPoint = decodeResumeToken(first!.token, clock);
    expect(firstPoint).toMatchObject({ filterKey, newest: now - 3 * SETTLE_MS / 2, floor: now - 2 * SETTLE_MS, issuedAt: now });
    expect(firstPoint.delivered.map((entry) => entry.digest)).toEqual([digestOf('uuid-1')]);
    // Past it, the floor is the settle bound below the newest record: the first record is left out.
    const secondPoint = decodeResumeToken(second!.token, clock);
    expect(secondPoint).toMatchObject({ newest: now - 1000, floor: now - 1000 - SETTLE_MS });
    expect(secondPoint.delivered.map((entry) => entry.digest)).toEqual([digestOf('uuid-2')]);
    // A late record leaves the newest where it was.
    expect(decodeResumeToken(third!.token, clock)).toMatchObject({ newest: now - 1000, floor: now - 1000 - SETTLE_MS });
    subscriber.offer([record(4, now)]);
    const fourth = (await take(subscriber)) as { token: string };
    expect(decodeResumeToken(fourth.token, clock).issuedAt).toBe(now + 5);
    await subscriber.return();
  });

  it('never carry records still queued behind their own', async () => {
    const { subscriber } = subscribe();
    subscriber.offer([record(1, now - 2), record(2, now - 1)]);
    const first = (await take(subscriber)) as { token: string };
    expect(decodeResumeToken(first.token, now).delivered.map((entry) => entry.digest)).toEqual([digestOf('uuid-1')]);
    await subscriber.return();
  });
});

describe('the catch-up hand-over', () => {
  it('delivers the catch-up first, then what the poller offered meanwhile, each once', async () => {
    const floor = now - SETTLE_MS;
    const { subscriber } = subscribe({ floor });
    subscriber.hold();
    subscriber.offer([record('live-1', now - 10), record('caught', now - 20)]);
    subscriber.offer([]);
    subscriber.offer([record('live-2', now)]);
    const first = take(subscriber);
    expect(await settled(first)).toBe(false);
    const caughtUp = subscriber.release([record('before-floor', floor - 1), record('replayed', now - 30), record('caught', now - 20)]);
    expect(await first).toMatchObject({ uuid: 'uuid-replayed' });
    expect(await takeUuids(subscriber, 3)).toEqual(['uuid-caught', 'uuid-live-1', 'uuid-live-2']);
    await caughtUp;
    await subscriber.return();
  });

  it('keeps the live records held until the last part of a catch-up in parts', async () => {
    const { subscriber } = subscribe();
    subscriber.hold();
    subscriber.offer([record('live', now)]);
    const firstPart = subscriber.release([record(1, now - 3)], false);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-1']);
    await firstPart;
    const next = take(subscriber);
    expect(await settled(next)).toBe(false);
    void subscriber.release([record(2, now - 2)]);
    expect(await next).toMatchObject({ uuid: 'uuid-2' });
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-live']);
    await subscriber.return();
  });

  it('resolves once the client has taken the catch-up, not before', async () => {
    const { subscriber } = subscribe();
    subscriber.hold();
    const caughtUp = subscriber.release([record(1, now - 2), record(2, now - 1)]);
    expect(await settled(caughtUp)).toBe(false);
    await takeUuids(subscriber, 1);
    expect(await settled(caughtUp)).toBe(false);
    await takeUuids(subscriber, 1);
    expect(await settled(caughtUp)).toBe(true);
    await subscriber.return();
  });

  it('resolves at once when there is nothing to replay, and when the client leaves during the replay', async () => {
    const empty = subscribe().subscriber;
    empty.hold();
    expect(await settled(empty.release([]))).toBe(true);
    await empty.return();

    const { subscriber, closed } = subscribe();
    subscriber.hold();
    const caughtUp = subscriber.release([record(1, now - 2), record(2, now - 1)]);
    await takeUuids(subscriber, 1);
    expect(subscriber.signal.aborted).toBe(false);
    await subscriber.return();
    expect(await settled(caughtUp)).toBe(true);
    expect(closed).toEqual([subscriber]);
    expect(subscriber.signal.aborted).toBe(true);
  });

  it('a replay larger than the slow-client limit is where the client starts, not a reason to cut it off', async () => {
    const { subscriber } = subscribe({ maxBuffered: 2 });
    subscriber.hold();
    subscriber.offer([record('held', now - 1)]);
    void subscriber.release(Array.from({ length: 10 }, (_, i) => record(i, now - 100 + i)));
    subscriber.offer([record('live-1', now)]);
    subscriber.offer([record('live-2', now)]);
    subscriber.offer([record('live-3', now)]);
    const uuids = await takeUuids(subscriber, 14);
    expect(uuids.slice(10)).toEqual(['uuid-held', 'uuid-live-1', 'uuid-live-2', 'uuid-live-3']);
    await subscriber.return();
  });

  it('a stream that ended during its catch-up read delivers none of it and frees its slot once', async () => {
    const { subscriber, closed } = subscribe();
    subscriber.hold();
    subscriber.offer([record('held', now)]);
    subscriber.end(new GatewayError('UPSTREAM_UNAVAILABLE', 'gone'));
    const caughtUp = subscriber.release([record(1, now - 1)]);
    expect(await settled(caughtUp)).toBe(true);
    expect(await take(subscriber)).toMatchObject({ error: { code: 'UPSTREAM_UNAVAILABLE' } });
    expect(await take(subscriber)).toBe('done');
    expect(closed).toEqual([subscriber]);

    const completed = subscribe().subscriber;
    completed.hold();
    completed.end();
    expect(await settled(completed.release([record(1, now - 1)]))).toBe(true);
    expect(await take(completed)).toBe('done');
  });

  it('a catch-up given without a hold is still handed over before the stream counts as caught up', async () => {
    const { subscriber } = subscribe();
    const caughtUp = subscriber.release([record(1, now - 1)]);
    expect(await settled(caughtUp)).toBe(false);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-1']);
    expect(await settled(caughtUp)).toBe(true);
    expect(await ready(subscriber)).toBe('waiting');
    await subscriber.return();
  });
});

describe('ending a stream', () => {
  it('ended with an error: the queued records, then the error, then the end; the slot is freed at once, once', async () => {
    const { subscriber, closed } = subscribe();
    subscriber.offer([record(1, now - 1), record(2, now)]);
    subscriber.end(new GatewayError('UPSTREAM_UNAUTHORIZED', 'no'));
    expect(closed).toEqual([subscriber]);
    expect(subscriber.signal.aborted).toBe(true);
    subscriber.end(new GatewayError('UPSTREAM_UNAVAILABLE', 'later'));
    subscriber.end();
    subscriber.offer([record(3, now)]);
    expect(await takeUuids(subscriber, 2)).toEqual(['uuid-1', 'uuid-2']);
    expect(await take(subscriber)).toMatchObject({ error: { code: 'UPSTREAM_UNAUTHORIZED' } });
    expect(await take(subscriber)).toBe('done');
    expect(await take(subscriber)).toBe('done');
    expect(closed).toEqual([subscriber]);
  });

  it('complete: the queued records, then the end, without an error', async () => {
    const { subscriber, closed } = subscribe();
    subscriber.offer([record(1, now)]);
    subscriber.end();
    subscriber.end(new GatewayError('UPSTREAM_UNAVAILABLE', 'later'));
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-1']);
    expect(await take(subscriber)).toBe('done');
    expect(closed).toEqual([subscriber]);
  });

  it('ends a client that waits for the next record when the stream fails', async () => {
    const { subscriber } = subscribe();
    const waiting = take(subscriber);
    subscriber.offer([]);
    subscriber.offer([record('refused', now - 20 * SETTLE_MS)]);
    expect(await settled(waiting)).toBe(false);
    subscriber.end(new GatewayError('UPSTREAM_UNAVAILABLE', 'gone'));
    expect(await waiting).toMatchObject({ error: { code: 'UPSTREAM_UNAVAILABLE' } });
    expect(await take(subscriber)).toBe('done');
  });

  it('return and throw end the stream at once: a waiting read ends, queued records are dropped', async () => {
    const { subscriber, closed } = subscribe();
    const waiting = take(subscriber);
    expect(await subscriber.return()).toEqual({ done: true, value: undefined });
    expect(await waiting).toBe('done');
    expect(closed).toEqual([subscriber]);
    subscriber.offer([record(1, now)]);
    expect(await take(subscriber)).toBe('done');

    const other = subscribe();
    other.subscriber.offer([record(1, now)]);
    expect(await other.subscriber.throw()).toEqual({ done: true, value: undefined });
    expect(await take(other.subscriber)).toBe('done');
    expect(other.closed).toEqual([other.subscriber]);
    expect(other.subscriber[Symbol.asyncIterator]()).toBe(other.subscriber);
  });
});

describe('a client that does not keep up', () => {
  it('is cut off once more than maxBuffered records wait beyond what it took, not at maxBuffered', async () => {
    const { subscriber, closed } = subscribe({ maxBuffered: 3 });
    // A burst larger than the limit reaches a client that reads it in time.
    subscriber.offer([1, 2, 3, 4].map((i) => record(i, now)));
    expect(await takeUuids(subscriber, 2)).toEqual(['uuid-1', 'uuid-2']);
    subscriber.offer([record(5, now)]);
    expect(closed).toEqual([]);
    subscriber.offer([record(6, now)]);
    expect(closed).toEqual([]);
    // Four waiting now: the next batch finds it too far behind.
    subscriber.offer([record(7, now)]);
    expect(closed).toEqual([subscriber]);
    expect(subscriber.signal.aborted).toBe(true);
    const cut = await take(subscriber);
    expect(cut).toMatchObject({ error: { code: 'RATE_LIMITED', detail: { queued: 3 } } });
    expect((cut as { error: GatewayError }).error.message).toMatch(/did not keep up/);
    expect(await take(subscriber)).toBe('done');
  });

  it('its connection is ended the grace time after the cut-off if it still holds unsent data', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const endIfUndrained = vi.fn();
    const { subscriber } = subscribe({ maxBuffered: 0, endIfUndrained, stallMs: 60_000, endGraceMs: 2000 });
    subscriber.offer([record(1, now)]);
    subscriber.offer([record(2, now)]);
    expect(await take(subscriber)).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(await take(subscriber)).toBe('done');
    await vi.advanceTimersByTimeAsync(1999);
    expect(endIfUndrained).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(endIfUndrained).toHaveBeenCalledTimes(1);
  });

  it('cut off for a stall, still has the grace time to take its error, and its connection is ended once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const endIfUndrained = vi.fn();
    const { subscriber, closed } = subscribe({ endIfUndrained, stallMs: 1000, endGraceMs: 500 });
    subscriber.offer([record(1, now)]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(closed).toEqual([subscriber]);
    await vi.advanceTimersByTimeAsync(499);
    expect(endIfUndrained).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(endIfUndrained).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(endIfUndrained).toHaveBeenCalledTimes(1);
    // Not taken within the grace: closed, its error dropped.
    expect(await take(subscriber)).toBe('done');
  });

  it('cut off for a stall, gets its error when it reads again within the grace time', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { subscriber } = subscribe({ endIfUndrained: vi.fn(), stallMs: 1000, endGraceMs: 500 });
    subscriber.offer([record(1, now)]);
    await vi.advanceTimersByTimeAsync(1400);
    expect(await take(subscriber)).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(await take(subscriber)).toBe('done');
  });

  it('is cut off without a connection to end too', async () => {
    const { subscriber, closed } = subscribe({ maxBuffered: 0 });
    subscriber.offer([record(1, now)]);
    subscriber.offer([record(2, now)]);
    expect(closed).toEqual([subscriber]);
    expect(await take(subscriber)).toMatchObject({ error: { code: 'RATE_LIMITED' } });
  });

  it('is cut off when it takes nothing for the stall time while records wait (10 s by default)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { subscriber, closed } = subscribe();
    subscriber.offer([record(1, now), record(2, now)]);
    await vi.advanceTimersByTimeAsync(9999);
    expect(closed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(closed).toEqual([subscriber]);
    expect(await take(subscriber)).toMatchObject({ error: { code: 'RATE_LIMITED' } });
  });

  it('the stall time counts from the last record the client asked for or was handed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { subscriber, closed } = subscribe({ endIfUndrained: undefined, stallMs: 1000 });
    subscriber.offer([record(1, now), record(2, now), record(3, now)]);
    await vi.advanceTimersByTimeAsync(800);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-1']);
    await vi.advanceTimersByTimeAsync(800);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-2']);
    await vi.advanceTimersByTimeAsync(800);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-3']);
    // Waiting for a record is no stall, however long.
    const waiting = take(subscriber);
    await vi.advanceTimersByTimeAsync(5000);
    subscriber.offer([record(4, now)]);
    expect(await waiting).toMatchObject({ uuid: 'uuid-4' });
    // Handed a record after a long wait: its pause starts there.
    subscriber.offer([record(5, now)]);
    await vi.advanceTimersByTimeAsync(900);
    expect(closed).toEqual([]);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-5']);
    subscriber.offer([record(6, now)]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(closed).toEqual([subscriber]);
  });

  it('an ended stream whose client does not take its end for the grace time has its connection ended (5 s by default)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const endIfUndrained = vi.fn();
    const { subscriber } = subscribe({ endIfUndrained });
    subscriber.end(new GatewayError('UPSTREAM_UNAVAILABLE', 'gone'));
    await vi.advanceTimersByTimeAsync(4999);
    expect(endIfUndrained).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(endIfUndrained).toHaveBeenCalledTimes(1);
    // Closed: the error it did not take is dropped.
    expect(await take(subscriber)).toBe('done');
  });

  it('a stream that ends while records wait gives its client the grace time, not the stall time, to take them', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const endIfUndrained = vi.fn();
    const { subscriber } = subscribe({ endIfUndrained });
    subscriber.offer([record(1, now)]);
    await vi.advanceTimersByTimeAsync(1000);
    subscriber.end();
    // Five seconds without a read since the client last asked: its connection does not drain.
    await vi.advanceTimersByTimeAsync(3999);
    expect(endIfUndrained).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(endIfUndrained).toHaveBeenCalledTimes(1);
  });

  it('a client with nothing waiting for it is no stall, however long it takes to ask again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { subscriber, closed } = subscribe();
    subscriber.offer([record(1, now)]);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-1']);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(closed).toEqual([]);
    subscriber.offer([record(2, now)]);
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-2']);
    await subscriber.return();
  });

  it('an ended stream without a connection to end is closed after the grace time all the same', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { subscriber } = subscribe();
    subscriber.end(new GatewayError('UPSTREAM_UNAVAILABLE', 'gone'));
    await vi.advanceTimersByTimeAsync(5000);
    expect(await take(subscriber)).toBe('done');
  });

  it('a client that took the whole ended stream is left alone', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const endIfUndrained = vi.fn();
    const { subscriber } = subscribe({ endIfUndrained, endGraceMs: 100 });
    subscriber.offer([record(1, now)]);
    subscriber.end();
    expect(await takeUuids(subscriber, 1)).toEqual(['uuid-1']);
    expect(await take(subscriber)).toBe('done');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(endIfUndrained).not.toHaveBeenCalled();
  });
});
