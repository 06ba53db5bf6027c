/** A fixed number of turns, taken in arrival order; a waiter whose signal aborts leaves the line at once. */
export type GiveBack = () => void;

export class Turns {
  #free: number;
  readonly #line = new Set<(giveBack: GiveBack) => void>();

  constructor(count: number) {
    this.#free = count;
  }

  /** Resolves with the function that gives the turn back, or with undefined once `signal` aborts. */
  take(signal: AbortSignal): Promise<GiveBack | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(this.#giveBackOnce());
    }
    return new Promise((resolve) => {
      const leave = () => {
        this.#line.delete(grant);
        resolve(undefined);
      };
      const grant = (giveBack: GiveBack) => {
        signal.removeEventListener('abort', leave);
        resolve(giveBack);
      };
      signal.addEventListener('abort', leave, { once: true });
      this.#line.add(grant);
    });
  }

  #giveBackOnce(): GiveBack {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const [next] = this.#line;
      if (!next) {
        this.#free++;
        return;
      }
      this.#line.delete(next);
      next(this.#giveBackOnce());
    };
  }
}
