/**
 * When a client counts as stalled (src/audit/live/subscriber.ts): records have waited for it longer than
 * it may pause, counted from the last time it asked for one. Fake timers and a fake clock.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { toLiveRecord } from '../../src/audit/live/records.js';
import { LiveSubscriber } from '../../src/audit/live/subscriber.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';

const now = Date.UTC(2026, 10, 23, 12, 0, 0);
const STALL_MS = 1000;

const record = (id: number) =>
  toLiveRecord({ uuid: `uuid-${id}`, timestamp: now, objectType: 'LOGIN', objectAction: 'LOGIN' } as unknown as AuditRecord);

/** A subscription whose client may pause STALL_MS, and the times it was cut off. */
function watch() {
  const onClose = vi.fn();
  const subscriber = new LiveSubscriber({
    filterKey: '[null,null]',
    floor: 0,
    settleMs: 0,
    maxBuffered: 100,
    now: () => now,
    onClose,
    stallMs: STALL_MS,
  });
  /** The client asks for the next record and is handed one waiting. */
  const take = async () => {
    const next = await subscriber.next();
    expect(next.done).toBe(false);
  };
  return { subscriber, onClose, take };
}

describe('a stalled client', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is one that takes nothing for the allowed pause once records wait, and not a moment before', async () => {
    const { subscriber, onClose } = watch();
    subscriber.offer([record(1)]);
    await vi.advanceTimersByTimeAsync(STALL_MS - 1);
    expect(onClose).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(await subscriber.next()).toMatchObject({ value: { error: { code: 'RATE_LIMITED' } } });
  });

  it('counts the pause from the last pull, not from the moment records began to wait', async () => {
    const { subscriber, onClose, take } = watch();
    subscriber.offer([record(1)]);
    await take();
    await vi.advanceTimersByTimeAsync(600);
    subscriber.offer([record(2)]);
    await vi.advanceTimersByTimeAsync(399);
    expect(onClose).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(onClose).toHaveBeenCalledTimes(1);
  });

  it('is cut off as soon as records wait when it has paused past the limit already', async () => {
    const { subscriber, onClose, take } = watch();
    subscriber.offer([record(1)]);
    await take();
    await vi.advanceTimersByTimeAsync(5000);
    expect(onClose).not.toHaveBeenCalled();
    subscriber.offer([record(2)]);
    await vi.advanceTimersByTimeAsync(0);
    expect(onClose).toHaveBeenCalledTimes(1);
  });

  it('gets its whole pause again when it pulled meanwhile', async () => {
    const { subscriber, onClose, take } = watch();
    subscriber.offer([record(1), record(2)]);
    await vi.advanceTimersByTimeAsync(700);
    await take();
    await vi.advanceTimersByTimeAsync(STALL_MS - 1);
    expect(onClose).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(onClose).toHaveBeenCalledTimes(1);
  });

  it('is not timed while nothing waits, and a wait that ended before the pause ran out is forgotten', async () => {
    const { subscriber, onClose, take } = watch();
    expect(vi.getTimerCount()).toBe(0);
    subscriber.offer([record(1)]);
    await take();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(onClose).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('is cut off once however often records are offered, and not at all once it left', async () => {
    const { subscriber, onClose } = watch();
    for (let id = 1; id <= 3; id++) subscriber.offer([record(id)]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(onClose).toHaveBeenCalledTimes(1);

    const left = watch();
    left.subscriber.offer([record(1)]);
    await left.subscriber.return();
    await vi.advanceTimersByTimeAsync(5000);
    expect(left.onClose).toHaveBeenCalledTimes(1);
    expect(left.onClose.mock.calls[0]![1]).toBe('client');
  });

  it('is timed without keeping the process alive', () => {
    // Restored here, before the fake timers: restored after them, the spy would put the fake
    // setTimeout back for every later file of this worker.
    const timeouts = vi.spyOn(globalThis, 'setTimeout');
    try {
      const { subscriber } = watch();
      subscriber.offer([record(1)]);
      const timer = timeouts.mock.results[0]?.value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
    } finally {
      timeouts.mockRestore();
    }
  });
});
