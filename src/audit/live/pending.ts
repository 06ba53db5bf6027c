/**
 * The records one subscriber has accepted and its client has not taken yet, in delivery order: a
 * catch-up read first, then live records. How far the client has fallen behind is counted from
 * the fewest records it has had waiting since the catch-up, not from zero: a long replay is where
 * such a client starts, and it keeps up as long as it takes records as fast as new ones arrive.
 */
import type { LiveRecord } from './records.js';

/** Taken records are dropped from the front in slices this large, not one by one. */
const COMPACT_AT = 1024;

export class PendingRecords {
  #records: LiveRecord[] = [];
  #next = 0;
  readonly #digests = new Set<string>();
  #catchUpLeft = 0;
  /** The fewest records waiting since the catch-up was handed over (0 without one). */
  #lowWater = 0;

  get size(): number {
    return this.#records.length - this.#next;
  }

  /** Records the client has fallen behind since it was least behind. */
  get behind(): number {
    return this.size - this.#lowWater;
  }

  get catchingUp(): boolean {
    return this.#catchUpLeft > 0;
  }

  has(digest: string): boolean {
    return this.#digests.has(digest);
  }

  /** A catch-up goes ahead of every live record: it is added, in one part or several, while nothing else waits. */
  addCatchUp(record: LiveRecord): void {
    this.add(record);
    this.#catchUpLeft++;
  }

  /** Whatever waits now is where the client starts from (a catch-up and the records held meanwhile). */
  startHere(): void {
    this.#lowWater = this.size;
  }

  add(record: LiveRecord): void {
    this.#records.push(record);
    this.#digests.add(record.digest);
  }

  take(): LiveRecord | undefined {
    if (this.size === 0) return undefined;
    const record = this.#records[this.#next++]!;
    this.#digests.delete(record.digest);
    this.#catchUpLeft = Math.max(0, this.#catchUpLeft - 1);
    this.#lowWater = Math.min(this.#lowWater, this.size);
    if (this.#next >= COMPACT_AT && this.#next * 2 >= this.#records.length) {
      this.#records = this.#records.slice(this.#next);
      this.#next = 0;
    }
    return record;
  }

  clear(): void {
    this.#records = [];
    this.#next = 0;
    this.#digests.clear();
    this.#catchUpLeft = 0;
    this.#lowWater = 0;
  }
}
