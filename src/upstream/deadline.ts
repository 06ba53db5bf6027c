/** An operation's deadline (REQUEST_TIMEOUT_MS) is one timer for its calls; each call's own (UPSTREAM_TIMEOUT_MS) within. */

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

export function abortCauseOf(signal: AbortSignal): 'deadline' | 'cancelled' {
  return signal.reason instanceof OperationTimedOutError ? 'deadline' : 'cancelled';
}

/** A signal that aborts with `timedOut()` in `ms`, or first with the parent's reason; `dispose` drops the timer and listener. */
function abortAfter(ms: number, parent: AbortSignal | undefined, timedOut: () => Error) {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent!.reason);
  let timer: NodeJS.Timeout | undefined;
  const dispose = () => {
    clearTimeout(timer);
    parent?.removeEventListener('abort', onParentAbort);
  };
  if (parent?.aborted) onParentAbort();
  else if (ms <= 0) controller.abort(timedOut());
  else {
    parent?.addEventListener('abort', onParentAbort, { once: true });
    timer = setTimeout(() => {
      dispose();
      controller.abort(timedOut());
    }, ms).unref();
  }
  return { signal: controller.signal, dispose };
}

export type OperationDeadline = ReturnType<typeof createOperationDeadline>;

export function createOperationDeadline(timeoutMs: number, callerSignal?: AbortSignal) {
  const expiresAt = performance.now() + timeoutMs;
  let made: ReturnType<typeof abortAfter> | undefined;
  let disposed = false;
  return {
    expiresAt,
    /** Made on first use: an operation that calls no upstream sets no timer. */
    get signal() {
      // Asked for after the operation ended: a signal that never aborts, and no timer.
      made ??= disposed
        ? { signal: new AbortController().signal, dispose() {} }
        : abortAfter(expiresAt - performance.now(), callerSignal, () => new OperationTimedOutError());
      return made.signal;
    },
    dispose() {
      disposed = true;
      made?.dispose();
    },
  };
}

export type Deadline = ReturnType<typeof createDeadline>;

/** A call's deadline: the sooner of `timeoutMs` from now and its operation's, whose signal it then shares. */
export function createDeadline(timeoutMs: number, callerSignal?: AbortSignal, callerExpiresAt?: number) {
  const now = performance.now();
  const shared = callerSignal && callerExpiresAt !== undefined && callerExpiresAt - now <= timeoutMs;
  const expiresAt = shared ? callerExpiresAt : now + timeoutMs;
  const { signal, dispose } = shared
    ? { signal: callerSignal, dispose() {} }
    : abortAfter(timeoutMs, callerSignal, () => new DeadlineExceededError());
  return {
    signal,
    dispose,
    remainingMs: () => Math.max(0, expiresAt - performance.now()),
    /** The call's own time ran out, its operation's did, or the caller left; undefined while not aborted. */
    abortCause: () => {
      if (!signal.aborted) return undefined;
      return signal.reason instanceof DeadlineExceededError ? 'timeout' : abortCauseOf(signal);
    },
  };
}

/** Waits for shared work (a token fetched for many callers) until `signal` aborts; the work runs on. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    const settle = <V>(done: (value: V) => void) => (value: V) => {
      signal.removeEventListener('abort', onAbort);
      done(value);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    // Followed even once aborted: a failure nobody waits for must not go unhandled.
    promise.then(settle(resolve), settle(reject));
  });
}
