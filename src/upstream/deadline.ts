/**
 * One deadline per upstream call. It bounds the connection, the retries, the backoff sleeps and the
 * wait for credentials alike, so a caller never waits longer than `upstreamTimeoutMs` in total.
 */

/** The abort reason when the deadline, not the caller, ended the call. */
export class DeadlineExceededError extends Error {
  constructor() {
    super('The upstream deadline was exceeded.');
    this.name = 'DeadlineExceededError';
  }
}

export interface Deadline {
  /** Aborts when the time is up or the caller's own signal aborts. */
  readonly signal: AbortSignal;
  remainingMs(): number;
  /** Why the signal fired; undefined while it has not. */
  abortCause(): 'timeout' | 'cancelled' | undefined;
  /** Releases the timer and the listener on the caller's signal. */
  dispose(): void;
}

export function createDeadline(timeoutMs: number, callerSignal?: AbortSignal): Deadline {
  const controller = new AbortController();
  const expiresAt = performance.now() + timeoutMs;
  let cause: 'timeout' | 'cancelled' | undefined;

  const onCallerAbort = () => {
    cause ??= 'cancelled';
    // Stryker disable next-line OptionalChaining: only the caller's signal calls this
    controller.abort(callerSignal?.reason);
  };
  const timer = setTimeout(() => {
    cause ??= 'timeout';
    controller.abort(new DeadlineExceededError());
  }, timeoutMs);
  timer.unref();

  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });

  return {
    signal: controller.signal,
    remainingMs: () => Math.max(0, expiresAt - performance.now()),
    abortCause: () => cause,
    dispose() {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}

/**
 * Waits for a shared promise (a token or session being fetched for many callers) without tying
 * its fate to this caller: the caller gives up when its own signal aborts, the promise runs on.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
