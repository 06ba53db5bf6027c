/**
 * The newest records a subscription delivered, as many as a resume token can carry plus one: a
 * token keeps the newest MAX_ENTRIES and raises its floor above the rest (boundedPoint), and the
 * one more tells where. Kept up to date as records are taken, so a token costs the same however
 * many records fall within the settle time (twenty thousand sharing one instant made every token
 * walk and sort all of them).
 */
import { MAX_ENTRIES, type DeliveredEntry } from './resume-token.js';

const CAPACITY = MAX_ENTRIES + 1;

export class NewestDelivered {
  /** Oldest first. */
  readonly #entries: DeliveredEntry[] = [];

  add(entry: DeliveredEntry): void {
    const entries = this.#entries;
    if (entries.length === CAPACITY && entry.timestamp <= entries[0]!.timestamp) return;
    let at = entries.length;
    while (at > 0 && entries[at - 1]!.timestamp > entry.timestamp) at--;
    entries.splice(at, 0, entry);
    if (entries.length > CAPACITY) entries.shift();
  }

  /** The entries stamped at or after `bound`, as a token takes them. */
  since(bound: number): DeliveredEntry[] {
    return this.#entries.filter((entry) => entry.timestamp >= bound);
  }
}
