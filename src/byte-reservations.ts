/**
 * Bytes held at once by many holders, up to a bound: request bodies and WebSocket messages being
 * received (src/connection-limits.ts), upstream answers being read and parsed (src/upstream/http.ts).
 * A holder that would take the total past the bound is refused at once, never made to wait.
 *
 * Holders of up to `smallBytes` count nothing: ordinary ones must never be refused behind large
 * ones, and what bounds their number (connections) bounds what they hold.
 */
export interface ByteHolding {
  /** Adds `bytes` to the holding; false, adding nothing, when the total would pass the bound. */
  add(bytes: number): boolean;
  /** Gives every byte back; later calls do nothing. */
  release(): void;
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

  /** Reserves `bytes` (a length known in advance) until the returned release is called; undefined: over the bound. */
  reserve(bytes: number): (() => void) | undefined {
    const holding = this.holding();
    return holding.add(bytes) ? () => holding.release() : undefined;
  }

  /**
   * A reservation that grows as bytes arrive, for a length not known in advance. Its bytes count
   * once it holds more than `smallBytes`, then all of them.
   */
  holding(): ByteHolding {
    let seen = 0;
    let counted = 0;
    let released = false;
    return {
      add: (bytes) => {
        if (released) return false;
        const uncounted = seen + bytes <= this.smallBytes ? 0 : seen + bytes - counted;
        if (this.#reserved + uncounted > this.max) return false;
        seen += bytes;
        counted += uncounted;
        this.#reserved += uncounted;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#reserved -= counted;
      },
    };
  }
}
