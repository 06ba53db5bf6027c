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
  // Stryker disable next-line ArrayDeclaration: a placeholder has no time, so since() never returns it, and the first shift drops it
  readonly #entries: DeliveredEntry[] = [];

  add(entry: DeliveredEntry): void {
    const entries = this.#entries;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: an entry kept at the oldest time kept is never in a token (boundedPoint keeps only what is newer than its 129th), so which one is kept there does not matter
    if (entries.length === CAPACITY && entry.timestamp <= entries[0]!.timestamp) return;
    let at = entries.length;
    // Stryker disable next-line EqualityOperator: the order among entries of one time is nobody's concern (a token's entries are a set)
    while (at > 0 && entries[at - 1]!.timestamp > entry.timestamp) at--;
    entries.splice(at, 0, entry);
    if (entries.length > CAPACITY) entries.shift();
  }

  /** The entries stamped at or after `bound`, as a token takes them. */
  since(bound: number): DeliveredEntry[] {
    return this.#entries.filter((entry) => entry.timestamp >= bound);
  }
}
