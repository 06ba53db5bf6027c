/** Bytes held at once by many holders, up to a bound: one that would pass it is refused, never made to wait. */

export class ByteReservations {
  #reserved = 0;

  constructor(
    readonly max: number,
    readonly smallBytes = 0,
  ) {}

  get bytes(): number {
    return this.#reserved;
  }

  /** A reservation that grows or shrinks with what it holds; it counts once past `smallBytes`, then all of it. */
  holding(): ByteHolding {
    return new ByteHolding(this);
  }

  /** Moves what `holding` counts to `next`; false, moving nothing, when more would pass the bound (unless forced). */
  recount(counted: number, next: number, force: boolean): boolean {
    if (!force && next > counted && this.#reserved + next - counted > this.max) return false;
    this.#reserved += next - counted;
    return true;
  }
}

/** One per request: methods on the prototype, so making one allocates a single small object. */
export class ByteHolding {
  #held = 0;
  #queued = 0;
  #counted = 0;
  #released = false;

  constructor(private readonly owner: ByteReservations) {}

  /** Adds `bytes` to the holding; false, adding nothing, when the total would pass the bound. */
  add(bytes: number): boolean {
    return this.#settle(this.#held + bytes, this.#queued, false);
  }

  /** Sets what the holding holds to `bytes` (less gives back; more is refused as `add` is). */
  resize(bytes: number): boolean {
    return this.#settle(bytes, this.#queued, false);
  }

  /** Sets the bytes queued for a client: already in the process, they count even past the bound. */
  queued(bytes: number): void {
    this.#settle(this.#held, bytes, true);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.owner.recount(this.#counted, 0, true);
    this.#counted = 0;
  }

  #settle(nextHeld: number, nextQueued: number, force: boolean): boolean {
    if (this.#released) return false;
    const total = nextHeld + nextQueued;
    const next = total <= this.owner.smallBytes ? 0 : total;
    if (!this.owner.recount(this.#counted, next, force)) return false;
    this.#counted = next;
    this.#held = nextHeld;
    this.#queued = nextQueued;
    return true;
  }
}

/** Holdings this small are not counted: MAX_CONNECTIONS bounds how many there are. */
export const SMALL_BODY_BYTES = 16 * 1024;

/** The memory budget each request, WebSocket message and operation holds a share of. */
export const createMemoryBudget = (maxBytes: number) => new ByteReservations(maxBytes, SMALL_BODY_BYTES);
