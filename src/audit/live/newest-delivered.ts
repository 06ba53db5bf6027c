/**
 * The newest records a subscription delivered, as many as a resume token can carry plus one (the
 * one more tells where boundedPoint raises the floor). Kept up to date as records are taken, so a
 * token costs the same however many records fall within the settle time.
 */
import { MAX_ENTRIES, type DeliveredEntry } from './resume-token.js';

export class NewestDelivered {
  /** Oldest first. */
  readonly #entries: DeliveredEntry[] = [];

  add(entry: DeliveredEntry): void {
    const at = this.#entries.findLastIndex((kept) => kept.timestamp <= entry.timestamp) + 1;
    this.#entries.splice(at, 0, entry);
    if (this.#entries.length > MAX_ENTRIES + 1) this.#entries.shift();
  }

  /** The entries stamped at or after `bound`, as a token takes them. */
  since(bound: number): DeliveredEntry[] {
    return this.#entries.filter((entry) => entry.timestamp >= bound);
  }
}
