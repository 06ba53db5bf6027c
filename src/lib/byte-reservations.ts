/**
 * Bytes held at once by many holders, up to a bound. The gateway has one such budget for what
 * callers make the process hold (src/server/http-server.ts, src/gateway/plugins/limits/held-requests.ts: request
 * bodies arriving, parsed requests waiting, open subscriptions, answers queued for a client that
 * does not read), one for upstream answers being read and parsed (src/upstream/http.ts) and one for
 * the records live reads keep (src/audit/live/window-read.ts). A holder that would take the total past
 * the bound is refused at once, never made to wait.
 *
 * Holders of up to `smallBytes` count nothing: ordinary ones must never be refused behind large
 * ones, and what bounds their number (connections) bounds what they hold.
 */
export interface ByteHolding {
  /** Adds `bytes` to the holding; false, adding nothing, when the total would pass the bound. */
  add(bytes: number): boolean;
  /** Sets what the holding holds to `bytes` (less gives back; more is refused as `add` is). */
  resize(bytes: number): boolean;
  /**
   * Sets the bytes queued for a client beside what the holding holds. They are already in the
   * process and cannot be refused: they count even past the bound, and refuse new holders until
   * given back.
   */
  queued(bytes: number): void;
  /** Gives every byte back; later calls do nothing. */
  release(): void;
  /** What the holding holds now, queued bytes included. */
  readonly bytes: number;
}

export class ByteReservations {
  #reserved = 0;

  constructor(
    readonly max: number,
    readonly smallBytes = 0,
  ) {}

  get bytes(): number {
    return this.#reserved;
  }

  /** Takes `bytes` if they fit; false, taking nothing, if they do not. */
  tryTake(bytes: number): boolean {
    if (this.#reserved + bytes > this.max) return false;
    this.#reserved += bytes;
    return true;
  }

  /** Gives back bytes taken before (never below nothing). */
  giveBack(bytes: number): void {
    this.#reserved = Math.max(0, this.#reserved - bytes);
  }

  /** Reserves `bytes` (a length known in advance) until the returned release is called; undefined: over the bound. */
  reserve(bytes: number): (() => void) | undefined {
    const holding = this.holding();
    return holding.add(bytes) ? () => holding.release() : undefined;
  }

  /**
   * A reservation that grows (or shrinks) as what it holds does, for a length not known in
   * advance. Its bytes count once it holds more than `smallBytes`, then all of them.
   */
  holding(): ByteHolding {
    let held = 0;
    let queued = 0;
    let counted = 0;
    let released = false;
    const countedFor = (bytes: number) => (bytes <= this.smallBytes ? 0 : bytes);
    const settle = (nextHeld: number, nextQueued: number, force: boolean): boolean => {
      if (released) return false;
      const next = countedFor(nextHeld + nextQueued);
      if (!force && next > counted && this.#reserved + next - counted > this.max) return false;
      this.#reserved += next - counted;
      counted = next;
      held = nextHeld;
      queued = nextQueued;
      return true;
    };
    return {
      add: (bytes) => settle(held + bytes, queued, false),
      resize: (bytes) => settle(bytes, queued, false),
      queued: (bytes) => void settle(held, bytes, true),
      release: () => {
        if (released) return;
        released = true;
        this.#reserved -= counted;
        counted = 0;
      },
      get bytes() {
        return held + queued;
      },
    };
  }
}
