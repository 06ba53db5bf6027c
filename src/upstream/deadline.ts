/**
 * An operation's deadline (REQUEST_TIMEOUT_MS) is one timer for all its upstream calls; each call's
 * (UPSTREAM_TIMEOUT_MS) bounds its connection, retries and wait for credentials, within the operation's.
 */

/** The abort reason when the call's own deadline, not the caller, ended the call. */
export class DeadlineExceededError extends Error {
  override name = 'DeadlineExceededError';
  override message = 'The upstream deadline was exceeded.';
}

/** The abort reason of an operation's signal when its deadline passed (the caller did not leave). */
export class OperationTimedOutError extends Error {
  override name = 'OperationTimedOutError';
  override message = 'The operation timed out.';
}

/** Why an operation's signal aborted: its deadline passed, or its caller went away. */
export function abortCauseOf(signal: AbortSignal): 'deadline' | 'cancelled' {
  return signal.reason instanceof OperationTimedOutError ? 'deadline' : 'cancelled';
}

export interface OperationDeadline {
  readonly expiresAt: number;
  /** Made on first use: an operation that calls no upstream sets no timer. */
  readonly signal: AbortSignal;
  /** Releases the timer and the listener on the caller's signal; the operation is over. */
  dispose(): void;
}

export function createOperationDeadline(timeoutMs: number, callerSignal?: AbortSignal): OperationDeadline {
  const expiresAt = performance.now() + timeoutMs;
  let controller: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  let disposed = false;
  const onCallerAbort = () => controller!.abort(callerSignal!.reason);
  const expire = () => {
    callerSignal?.removeEventListener('abort', onCallerAbort);
    controller!.abort(new OperationTimedOutError());
  };
  const arm = (made: AbortController) => {
    if (callerSignal?.aborted) return made.abort(callerSignal.reason);
    const left = expiresAt - performance.now();
    if (left <= 0) return made.abort(new OperationTimedOutError());
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    timer = setTimeout(expire, left);
    timer.unref();
  };
  return {
    expiresAt,
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (!disposed) arm(controller);
      }
      return controller.signal;
    },
    dispose() {
      disposed = true;
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}

export interface Deadline {
  /** Aborts when the time is up or the caller's own signal aborts. */
  readonly signal: AbortSignal;
  remainingMs(): number;
  /** The call's own time ran out, its operation's did, or the caller left; undefined while not aborted. */
  abortCause(): 'timeout' | 'deadline' | 'cancelled' | undefined;
  /** Releases the timer and the listener on the caller's signal. */
  dispose(): void;
}

/**
 * A call's deadline: the sooner of `timeoutMs` from now and its operation's. When the operation's
 * comes first, the call shares the operation's signal and timer: nothing is made for it.
 */
export function createDeadline(timeoutMs: number, callerSignal?: AbortSignal, callerExpiresAt?: number): Deadline {
  const now = performance.now();
  if (callerSignal && callerExpiresAt !== undefined && callerExpiresAt - now <= timeoutMs) {
    return {
      signal: callerSignal,
      remainingMs: () => Math.max(0, callerExpiresAt - performance.now()),
      abortCause: () => (callerSignal.aborted ? abortCauseOf(callerSignal) : undefined),
      dispose() {},
    };
  }
  const controller = new AbortController();
  const expiresAt = now + timeoutMs;
  let cause: 'timeout' | 'deadline' | 'cancelled' | undefined;

  const onCallerAbort = () => {
    cause ??= abortCauseOf(callerSignal!);
    controller.abort(callerSignal!.reason);
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

/** Waits for shared work (a token fetched for many callers) until `signal` aborts; the work runs on. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Its failure is nobody's now: handled, or it would be an unhandled rejection.
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
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
