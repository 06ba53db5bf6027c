/**
 * A fixed number of turns, taken in arrival order. A waiter whose signal aborts leaves the line at
 * once, so a crowd of callers that come and go costs nothing while they wait.
 */
export type GiveBack = () => void;

interface Waiter {
  readonly grant: (giveBack: GiveBack) => void;
}

export class Turns {
  #free: number;
  /** Insertion-ordered: the first is served first; a leaver is deleted in O(1). */
  readonly #line = new Set<Waiter>();

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
        this.#line.delete(waiter);
        resolve(undefined);
      };
      const waiter: Waiter = {
        grant: (giveBack) => {
          signal.removeEventListener('abort', leave);
          resolve(giveBack);
        },
      };
      signal.addEventListener('abort', leave, { once: true });
      this.#line.add(waiter);
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
      next.grant(this.#giveBackOnce());
    };
  }
}
