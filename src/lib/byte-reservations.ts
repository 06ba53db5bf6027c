/**
 * Bytes held at once by many holders, up to a bound: what callers make the process hold (memory-budget.ts),
 * upstream answers being parsed, the records live reads keep. A holder that would pass the bound is
 * refused at once, never made to wait. Holders of up to `smallBytes` count nothing: ordinary ones are
 * never refused behind large ones, and what bounds their number (connections) bounds what they hold.
 */
export interface ByteHolding {
  /** Adds `bytes` to the holding; false, adding nothing, when the total would pass the bound. */
  add(bytes: number): boolean;
  /** Sets what the holding holds to `bytes` (less gives back; more is refused as `add` is). */
  resize(bytes: number): boolean;
  /** Sets the bytes queued for a client: already in the process, they count even past the bound. */
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

  /** Takes `bytes` if they fit; false, taking nothing, if not. */
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

  /** A reservation that grows or shrinks with what it holds; it counts once past `smallBytes`, then all of it. */
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
