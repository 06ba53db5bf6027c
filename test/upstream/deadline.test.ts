/** One deadline per upstream call, one per operation, and waiting on shared work without being tied to it. */
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import {
  abortCauseOf,
  createDeadline,
  createOperationDeadline,
  DeadlineExceededError,
  OperationTimedOutError,
  untilAborted,
} from '../../src/upstream/deadline.js';

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

describe('the deadline of an operation', () => {
  it('aborts its signal with OperationTimedOutError when its time is up', async () => {
    const operation = createOperationDeadline(30);
    expect(operation.signal.aborted).toBe(false);
    await vi.waitFor(() => expect(operation.signal.aborted).toBe(true));
    expect(operation.signal.reason).toBeInstanceOf(OperationTimedOutError);
    expect(abortCauseOf(operation.signal)).toBe('deadline');
  });

  it("aborts with the caller's reason when the caller goes away first, and says so", () => {
    const caller = new AbortController();
    const operation = createOperationDeadline(10_000, caller.signal);
    const { signal } = operation;
    caller.abort(new Error('client closed'));
    expect(signal.reason).toMatchObject({ message: 'client closed' });
    expect(abortCauseOf(signal)).toBe('cancelled');
    operation.dispose();
  });

  it('is aborted at once when first asked for after its time, or for a caller already gone', () => {
    const late = createOperationDeadline(0);
    expect(abortCauseOf(late.signal)).toBe('deadline');
    expect(late.signal.aborted).toBe(true);
    const gone = createOperationDeadline(10_000, AbortSignal.abort(new Error('gone')));
    expect(gone.signal.aborted).toBe(true);
    expect(abortCauseOf(gone.signal)).toBe('cancelled');
  });

  it('listens to its caller only once asked for its signal, and no more once disposed', () => {
    const caller = new AbortController();
    const operation = createOperationDeadline(10_000, caller.signal);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    void operation.signal;
    void operation.signal;
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    operation.dispose();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    caller.abort();
    expect(operation.signal.aborted).toBe(false);
  });

  it("gives a call the sooner of its own timeout and the operation's, and shares the operation's signal when that comes first", async () => {
    const soon = createOperationDeadline(40);
    const call = createDeadline(10_000, soon.signal, soon.expiresAt);
    expect(call.signal).toBe(soon.signal);
    expect(call.remainingMs()).toBeLessThanOrEqual(40);
    await vi.waitFor(() => expect(call.signal.aborted).toBe(true));
    expect(call.abortCause()).toBe('deadline');

    const late = createOperationDeadline(10_000);
    const quick = createDeadline(30, late.signal, late.expiresAt);
    expect(quick.signal).not.toBe(late.signal);
    await vi.waitFor(() => expect(quick.signal.aborted).toBe(true));
    expect(quick.abortCause()).toBe('timeout');
    expect(late.signal.aborted).toBe(false);
    quick.dispose();
    late.dispose();
  });

  it("tells a call cut by its operation's deadline from one whose caller left", () => {
    const caller = new AbortController();
    const operation = createOperationDeadline(10_000, caller.signal);
    const call = createDeadline(5_000, operation.signal, operation.expiresAt);
    caller.abort();
    expect(call.abortCause()).toBe('cancelled');
    call.dispose();
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
