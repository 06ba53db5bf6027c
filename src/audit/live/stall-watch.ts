/**
 * Notices a client that stops taking what waits for it. Both transports take the next item only
 * once the previous one has been written out (SSE waits for the response to drain, graphql-ws for
 * the socket's send callback), so a long pause with items waiting means a connection that does not
 * drain. A timer runs only while something waits and nobody is asking for it.
 */
export interface StallWatchOptions {
  /** How long the client may pause now, or undefined when nothing waits for it. */
  readonly limitMs: () => number | undefined;
  readonly onStall: () => void;
}

export class StallWatch {
  readonly #options: StallWatchOptions;
  #lastPull = performance.now();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: StallWatchOptions) {
    this.#options = options;
  }

  /** The client asked for the next item. */
  pulled(): void {
    this.#lastPull = performance.now();
  }

  /** Something may wait for the client now: start timing its pause, unless already timing. */
  arm(): void {
    if (this.#timer !== undefined) return;
    const limit = this.#options.limitMs();
    if (limit === undefined) return;
    this.#wait(limit - this.#idle());
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #idle(): number {
    return performance.now() - this.#lastPull;
  }

  #wait(ms: number): void {
    this.#timer = setTimeout(() => this.#check(), Math.max(0, ms));
    this.#timer.unref();
  }

  #check(): void {
    this.#timer = undefined;
    const limit = this.#options.limitMs();
    if (limit === undefined) return;
    const idle = this.#idle();
    if (idle < limit) return this.#wait(limit - idle);
    this.#options.onStall();
  }
}
