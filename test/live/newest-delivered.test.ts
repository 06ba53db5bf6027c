/**
 * What a resume token carries of the records its stream delivered: the newest MAX_ENTRIES within
 * the settle time, the floor raised above those left out. Kept as records are taken
 * (src/audit/live/resume-token.ts); these compare it with the whole history, ties and late records
 * included.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digestOf, toLiveRecord } from '../../src/audit/live/records.js';
import { boundedPoint, decodeResumeToken, MAX_ENTRIES, NewestDelivered, type DeliveredEntry, type ResumePoint } from '../../src/audit/live/resume-token.js';
import { LiveSubscriber, type LiveItem } from '../../src/audit/live/subscriber.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';

const now = Date.UTC(2026, 10, 23, 12, 0, 0);
const filterKey = JSON.stringify([null, null]);

/** What a token made from the whole history carries: its floor and its digests. */
function fromHistory(history: readonly DeliveredEntry[], bound: number, floor: number) {
  const point: ResumePoint = { filterKey, newest: now, floor, issuedAt: now, delivered: history.filter((entry) => entry.timestamp >= bound) };
  return carried(boundedPoint(point));
}

const carried = (point: Pick<ResumePoint, 'floor' | 'delivered'>) => ({
  floor: point.floor,
  digests: point.delivered.map((entry) => entry.digest).sort(),
});

/** Timestamps from a narrow range, so that many entries share one. */
const histories = fc
  .array(fc.integer({ min: 0, max: 40 }), { maxLength: 3 * MAX_ENTRIES })
  .map((offsets) => offsets.map((offset, i) => ({ digest: digestOf(`uuid-${i}`), timestamp: now - offset })));

describe('the newest delivered records', () => {
  it('are what a token made from the whole history carries, for any order, ties and settle bound', () => {
    fc.assert(
      fc.property(histories, fc.integer({ min: 0, max: 45 }), (history, back) => {
        const newest = new NewestDelivered();
        for (const entry of history) newest.add(entry);
        const bound = now - back;
        const floor = now - 60_000;
        expect(carried(boundedPoint({ filterKey, newest: now, floor, issuedAt: now, delivered: newest.since(bound) }))).toEqual(
          fromHistory(history, bound, floor),
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe('a live subscription', () => {
  const record = (i: number, timestamp: number) =>
    toLiveRecord({ uuid: `uuid-${i}`, timestamp, objectType: 'LOGIN', objectAction: 'LOGIN' } as unknown as AuditRecord);

  it('gives each record a token carrying what it delivered up to that record, hundreds sharing one instant', async () => {
    const subscriber = new LiveSubscriber({ filterKey, floor: now - 60_000, settleMs: 60_000, maxBuffered: 10_000, now: () => now, onClose: () => {} });
    // Three batches: one instant shared by 300 records, then newer ones, then late ones older than both.
    const batches = [
      Array.from({ length: 300 }, (_, i) => record(i, now - 5000)),
      Array.from({ length: 50 }, (_, i) => record(300 + i, now - 4000 + i)),
      Array.from({ length: 50 }, (_, i) => record(350 + i, now - 5001)),
    ];
    const history: DeliveredEntry[] = [];
    for (const batch of batches) {
      subscriber.offer(batch);
      for (let i = 0; i < batch.length; i++) {
        const next = (await subscriber.next()) as IteratorResult<LiveItem & { resumeAfter(): string }>;
        const taken = batch[i]!;
        expect(next.value.record.uuid).toBe(taken.uuid);
        history.push({ digest: taken.digest, timestamp: taken.timestamp });
        const newest = Math.max(...history.map((entry) => entry.timestamp));
        const point = decodeResumeToken(next.value.resumeAfter(), now);
        expect(carried(point)).toEqual(fromHistory(history, newest - 60_000, Math.max(now - 60_000, newest - 60_000)));
      }
    }
    await subscriber.return();
  });
});
