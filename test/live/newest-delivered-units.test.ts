/** The newest delivered records a subscription keeps for its tokens: how many, and which. */
import { describe, expect, it } from 'vitest';
import { digestOf } from '../../src/audit/live/records.js';
import { MAX_ENTRIES, NewestDelivered, type DeliveredEntry } from '../../src/audit/live/resume-token.js';

const now = Date.UTC(2026, 10, 23, 12, 0, 0);

/** Distinct times, in an order that jumps back and forth (late records among newer ones). */
const shuffled = (count: number): DeliveredEntry[] =>
  Array.from({ length: count }, (_, i) => {
    const offset = (i * 7919) % count;
    return { digest: digestOf(`uuid-${offset}`), timestamp: now - offset };
  });

describe('NewestDelivered', () => {
  it(`keeps the newest ${MAX_ENTRIES + 1} entries, oldest first, whatever order they come in`, () => {
    const history = shuffled(3 * MAX_ENTRIES);
    const newest = new NewestDelivered();
    for (const entry of history) newest.add(entry);
    const expected = [...history].sort((a, b) => a.timestamp - b.timestamp).slice(-(MAX_ENTRIES + 1));
    expect(newest.since(-Infinity)).toEqual(expected);
    expect(newest.since(expected[10]!.timestamp)).toEqual(expected.slice(10));
  });

  it('keeps everything while there is room, in time order', () => {
    const history = shuffled(MAX_ENTRIES + 1);
    const newest = new NewestDelivered();
    for (const entry of history) newest.add(entry);
    expect(newest.since(-Infinity)).toEqual([...history].sort((a, b) => a.timestamp - b.timestamp));
  });
});
