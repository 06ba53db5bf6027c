/** The soak's verdict: which figures break a promise, and when a memory trend is a rise, not noise. */
import { describe, expect, it } from 'vitest';
import { brokenPromises, DEFAULT_LIMITS, memoryRises, trendOf, type Figures, type Sample } from '../../bench/soak-verdict.js';

const MINUTE = 60_000;
/** One sample a second for `minutes`, of `value(ms)`. */
const samples = (minutes: number, value: (at: number) => number): Sample[] =>
  Array.from({ length: minutes * 60 + 1 }, (_, i) => ({ at: i * 1000, value: value(i * 1000) }));
/** A sawtooth of ±15 MB every 20 s around 150 MB, as a collected heap looks. */
const sawtooth = (at: number) => 150 + 30 * ((at % 20_000) / 20_000) - 15;

const clean: Figures = {
  statuses: { '200': 900, '400': 40, '404': 5 },
  codes: { UPSTREAM_UNAVAILABLE: 120, BAD_USER_INPUT: 30, NOT_FOUND: 60 },
  codeless: 0,
  live: { delivered: 5000, duplicated: 0, missing: 0, foreign: 0 },
  rssMB: trendOf(samples(10, sawtooth)),
  requestTimeoutMs: 30_000,
  longestRequestMs: 31_000,
  unanswered: 0,
};

describe('memory trend', () => {
  it('fits start, peak, end and the slope of the second half', () => {
    const trend = trendOf(samples(10, (at) => (at < 5 * MINUTE ? 100 + at / 10_000 : 130 + (2 * (at - 5 * MINUTE)) / MINUTE)));
    expect(trend).toMatchObject({ start: 100, end: 140, peak: 140, secondHalfMs: 5 * MINUTE });
    expect(trend.slopePerMinute).toBeCloseTo(2, 6);
    expect(trend.secondHalfRise).toBeCloseTo(10, 6);
    expect(trend.slopeErrorPerMinute).toBeCloseTo(0, 6);
  });

  it('is a rise when it climbs steadily past the noise over a second half long enough to judge', () => {
    expect(memoryRises(trendOf(samples(10, (at) => sawtooth(at) + (5 * at) / MINUTE)))).toBe(true);
  });

  it('is no rise when flat, falling, below the noise, or over a second half too short to judge', () => {
    expect(memoryRises(trendOf(samples(10, sawtooth)))).toBe(false);
    expect(memoryRises(trendOf(samples(10, (at) => sawtooth(at) - (5 * at) / MINUTE)))).toBe(false);
    // 2 MB/min over 5 min: 10 MB, under both 16 MB and a tenth of the mean.
    expect(memoryRises(trendOf(samples(10, (at) => 150 + (2 * at) / MINUTE)))).toBe(false);
    const short = trendOf(samples(2, (at) => 100 + (30 * at) / MINUTE));
    expect(short.secondHalfMs).toBeLessThan(DEFAULT_LIMITS.memoryJudgedFromMs);
    expect(memoryRises(short)).toBe(false);
  });
});

describe('broken promises', () => {
  it('are none for a clean run, with client errors and upstream failures answered as such', () => {
    expect(brokenPromises(clean)).toEqual([]);
  });

  it.each<[string, Partial<Figures>, RegExp]>([
    ['a 5xx', { statuses: { '200': 10, '503': 2, '502': 1 } }, /3 answers with a 5xx status/],
    ['an INTERNAL_SERVER_ERROR', { codes: { INTERNAL_SERVER_ERROR: 1 } }, /1 INTERNAL_SERVER_ERROR/],
    ['an error without a code', { codeless: 2 }, /2 errors without a code/],
    ['a request left unanswered', { unanswered: 1 }, /1 requests without an answer/],
    ['a live record delivered twice', { live: { ...clean.live, duplicated: 1 } }, /1 live records delivered twice/],
    ['a live record missing', { live: { ...clean.live, missing: 4 } }, /4 live records never delivered/],
    ['a live record of another filter', { live: { ...clean.live, foreign: 1 } }, /outside their subscription's filter/],
    ['no live record at all', { live: { delivered: 0, duplicated: 0, missing: 0, foreign: 0 } }, /no live record delivered/],
    ['memory rising', { rssMB: trendOf(samples(10, (at) => sawtooth(at) + (5 * at) / MINUTE)) }, /RSS rose .* MB over the second half/],
    ['a request past its deadline and margin', { longestRequestMs: 35_001 }, /took 35.0 s, past its 30 s deadline/],
  ])('include %s', (_name, change, message) => {
    const broken = brokenPromises({ ...clean, ...change });
    expect(broken).toHaveLength(1);
    expect(broken[0]).toMatch(message);
  });

  it('leave a request within its deadline and margin alone', () => {
    expect(brokenPromises({ ...clean, longestRequestMs: 35_000 })).toEqual([]);
  });
});
