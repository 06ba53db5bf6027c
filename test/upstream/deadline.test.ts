/** One deadline per upstream call, and waiting on shared work without being tied to it. */
import { describe, expect, it, vi } from 'vitest';
import { createDeadline, DeadlineExceededError, untilAborted } from '../../src/upstream/deadline.js';

describe('deadline', () => {
  it('aborts with DeadlineExceededError when the time is up', async () => {
    const deadline = createDeadline(30);
    expect(deadline.signal.aborted).toBe(false);
    expect(deadline.abortCause()).toBeUndefined();
    expect(deadline.remainingMs()).toBeGreaterThan(0);
    expect(deadline.remainingMs()).toBeLessThanOrEqual(30);
    await vi.waitFor(() => expect(deadline.signal.aborted).toBe(true));
    expect(deadline.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect(deadline.signal.reason).toMatchObject({ name: 'DeadlineExceededError', message: 'The upstream deadline was exceeded.' });
    expect(deadline.abortCause()).toBe('timeout');
    expect(deadline.remainingMs()).toBe(0);
  });

  it('aborts with the reason of a caller that goes away first, and says so', () => {
    const caller = new AbortController();
    const deadline = createDeadline(10_000, caller.signal);
    caller.abort(new Error('client closed'));
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.signal.reason).toMatchObject({ message: 'client closed' });
    expect(deadline.abortCause()).toBe('cancelled');
    deadline.dispose();
  });

  it('is aborted from the start for a caller already gone', () => {
    const deadline = createDeadline(10_000, AbortSignal.abort(new Error('gone')));
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.abortCause()).toBe('cancelled');
    deadline.dispose();
  });

  it('once disposed, neither the time nor the caller aborts it', async () => {
    const caller = new AbortController();
    const deadline = createDeadline(20, caller.signal);
    deadline.dispose();
    caller.abort();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(deadline.signal.aborted).toBe(false);
    expect(deadline.abortCause()).toBeUndefined();
  });
});

describe('untilAborted', () => {
  it('passes the value or the failure of the shared promise through', async () => {
    const signal = new AbortController().signal;
    await expect(untilAborted(Promise.resolve(7), signal)).resolves.toBe(7);
    await expect(untilAborted(Promise.reject(new Error('failed')), signal)).rejects.toThrow('failed');
  });

  it('stops waiting when the signal aborts, while the shared promise runs on', async () => {
    const controller = new AbortController();
    let finish!: (value: string) => void;
    const shared = new Promise<string>((resolve) => (finish = resolve));
    const waiting = untilAborted(shared, controller.signal);
    controller.abort(new Error('caller left'));
    await expect(waiting).rejects.toThrow('caller left');
    finish('done');
    await expect(shared).resolves.toBe('done');
    await expect(untilAborted(shared, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});
