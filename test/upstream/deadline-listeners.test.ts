/**
 * A request's signal lives as long as the request and is shared by every upstream call it makes:
 * listeners left on it pile up (and Node warns past ten of them).
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createDeadline, untilAborted } from '../../src/upstream/deadline.js';

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('listeners on a caller signal', () => {
  it('are gone once each wait for shared work ends, fulfilled or failed', async () => {
    const caller = new AbortController();
    const waits: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      waits.push(untilAborted(Promise.resolve(i), caller.signal));
      waits.push(untilAborted(Promise.reject(new Error(`failed ${i}`)), caller.signal).catch(() => undefined));
    }
    expect(abortListeners(caller.signal)).toBe(40);
    await Promise.all(waits);
    expect(abortListeners(caller.signal)).toBe(0);
  });

  it('are gone once the caller aborts, while the shared work runs on', async () => {
    const caller = new AbortController();
    const unsettled = new Promise<never>(() => {});
    const waiting = untilAborted(unsettled, caller.signal);
    caller.abort(new Error('caller left'));
    await expect(waiting).rejects.toThrow('caller left');
    expect(abortListeners(caller.signal)).toBe(0);
  });

  it('are gone once each deadline is disposed or the caller aborts it', () => {
    const caller = new AbortController();
    for (let i = 0; i < 20; i++) createDeadline(10_000, caller.signal).dispose();
    expect(abortListeners(caller.signal)).toBe(0);
    const open = createDeadline(10_000, caller.signal);
    expect(abortListeners(caller.signal)).toBe(1);
    caller.abort();
    expect(abortListeners(caller.signal)).toBe(0);
    expect(open.abortCause()).toBe('cancelled');
    open.dispose();
  });
});

describe('a wait that begins after its caller left', () => {
  it('rejects with the reason and leaves no unhandled rejection behind when the work later fails', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const caller = new AbortController();
      caller.abort(new Error('caller left'));
      const work = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('work failed')), 5));
      await expect(untilAborted(work, caller.signal)).rejects.toThrow('caller left');
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
