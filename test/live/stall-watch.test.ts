/**
 * When a client counts as stalled (src/audit/live/stall-watch.ts): records have waited for it longer than
 * it may pause, counted from the last time it asked for one. Fake timers and a fake clock.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StallWatch } from '../../src/audit/live/stall-watch.js';

/** A watch whose allowed pause is `limit` (undefined: nothing waits), and the stalls it reports. */
function watch(initialLimit: number | undefined) {
  let limit = initialLimit;
  const onStall = vi.fn();
  const stall = new StallWatch({ limitMs: () => limit, onStall });
  return {
    stall,
    onStall,
    setLimit: (next: number | undefined) => {
      limit = next;
    },
  };
}

describe('StallWatch', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports a client that takes nothing for the allowed pause once records wait, and not a moment before', () => {
    const { stall, onStall } = watch(1000);
    stall.arm();
    vi.advanceTimersByTime(999);
    expect(onStall).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onStall).toHaveBeenCalledTimes(1);
  });

  it('counts the pause from the last pull, not from the moment records began to wait', () => {
    const { stall, onStall } = watch(1000);
    stall.pulled();
    vi.advanceTimersByTime(600);
    stall.arm();
    vi.advanceTimersByTime(399);
    expect(onStall).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onStall).toHaveBeenCalledTimes(1);
  });

  it('reports a client already paused past the limit as soon as records wait', () => {
    const { stall, onStall } = watch(1000);
    vi.advanceTimersByTime(5000);
    stall.arm();
    vi.advanceTimersByTime(0);
    expect(onStall).toHaveBeenCalledTimes(1);
  });

  it('gives a client that pulled meanwhile its whole pause again', () => {
    const { stall, onStall } = watch(1000);
    stall.arm();
    vi.advanceTimersByTime(700);
    stall.pulled();
    vi.advanceTimersByTime(999);
    expect(onStall).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onStall).toHaveBeenCalledTimes(1);
  });

  it('times nothing while nothing waits, and forgets a wait that ended before the pause ran out', () => {
    const idle = watch(undefined);
    idle.stall.arm();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(idle.onStall).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);

    const drained = watch(1000);
    drained.stall.arm();
    drained.setLimit(undefined);
    vi.advanceTimersByTime(60_000);
    expect(drained.onStall).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reports one stall however often it is armed, and none once stopped', () => {
    const { stall, onStall } = watch(1000);
    stall.arm();
    stall.arm();
    vi.advanceTimersByTime(5000);
    expect(onStall).toHaveBeenCalledTimes(1);

    const stopped = watch(1000);
    stopped.stall.arm();
    stopped.stall.stop();
    vi.advanceTimersByTime(5000);
    expect(stopped.onStall).not.toHaveBeenCalled();
    // Stopped, it can be armed again.
    stopped.stall.arm();
    vi.advanceTimersByTime(5000);
    expect(stopped.onStall).toHaveBeenCalledTimes(1);
  });

  it('does not keep the process alive while it times a pause', () => {
    // Restored here, before the fake timers: restored after them, the spy would put the fake
    // setTimeout back for every later file of this worker.
    const timeouts = vi.spyOn(globalThis, 'setTimeout');
    try {
      const { stall } = watch(1000);
      stall.arm();
      const timer = timeouts.mock.results[0]?.value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
    } finally {
      timeouts.mockRestore();
    }
  });
});
