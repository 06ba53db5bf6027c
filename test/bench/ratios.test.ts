/** Two servers compared round by round: the median ratio, its spread, and what the order did. */
import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../bench/load.js';
import { formatRatios, median, roundRatios } from '../../bench/ratios.js';

/** A side's result with only what roundRatios reads: each round's CPU ms and requests answered. */
function side(process: string, rounds: [cpuMs: number, answered: number][]): LoadResult {
  return { phases: rounds.map(([cpuMs, answered]) => ({ cpuMs: { [process]: cpuMs }, answered })) } as unknown as LoadResult;
}

describe('median', () => {
  it('is the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});

describe('roundRatios', () => {
  it('compares CPU per request within each round, not the totals', () => {
    // Round 2 of `a` landed on a burst of other work: it moves the totals, not the median.
    const a = side('gateway', [[100, 10], [110, 10], [400, 10], [100, 10]]);
    const b = side('reference', [[100, 20], [100, 20], [100, 20], [100, 20]]);
    const r = roundRatios(a, 'gateway', b, 'reference');
    expect(r.perRound).toEqual([2, 2.2, 8, 2]);
    expect(r.median).toBeCloseTo(2.1);
    expect(r.min).toBe(2);
    expect(r.max).toBe(8);
  });

  it('splits the rounds by which side ran first (ABBA: a first in even rounds unless told otherwise)', () => {
    const a = side('x', [[120, 10], [100, 10], [120, 10], [100, 10]]);
    const b = side('x', [[100, 10], [100, 10], [100, 10], [100, 10]]);
    const r = roundRatios(a, 'x', b, 'x');
    expect(r.aFirst).toBeCloseTo(1.2);
    expect(r.bFirst).toBeCloseTo(1);
    const swapped = roundRatios(a, 'x', b, 'x', false);
    expect(swapped.aFirst).toBeCloseTo(1);
    expect(swapped.bFirst).toBeCloseTo(1.2);
    expect(formatRatios(r, 'gw', 'ref')).toBe('1.10 (1.00-1.20 over 4 rounds; gw first 1.20, ref first 1.00)');
  });
});
