/**
 * Two servers measured in the same rounds (`runRounds`), compared round by round: each round's
 * ratio of CPU per request, their median and spread. The median shrugs off a round that another
 * process's burst landed on; the spread says how far one round can be trusted.
 */
import type { LoadResult, PhaseCost } from './load.js';

export interface RoundRatios {
  /** Each round's CPU per request of `a` over `b`, in round order. */
  readonly perRound: readonly number[];
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** The median of the rounds `a` ran first in, and of those `b` did: apart by more than the spread, the order matters. */
  readonly aFirst: number;
  readonly bFirst: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  return n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
}

const perRequest = (phase: PhaseCost, process: string) => (phase.cpuMs[process] ?? Number.NaN) / phase.answered;

/**
 * `a`'s CPU per request over `b`'s, round by round; `aProcess` and `bProcess` name the sampled
 * process of each. `aFirstInEvenRounds`: the order `runRounds` was given (`a` before `b`).
 */
export function roundRatios(a: LoadResult, aProcess: string, b: LoadResult, bProcess: string, aFirstInEvenRounds = true): RoundRatios {
  const rounds = Math.min(a.phases.length, b.phases.length);
  const perRound = Array.from({ length: rounds }, (_, i) => perRequest(a.phases[i]!, aProcess) / perRequest(b.phases[i]!, bProcess));
  const first = (aFirst: boolean) => perRound.filter((_, i) => (i % 2 === 0) === (aFirst === aFirstInEvenRounds));
  return {
    perRound,
    median: median(perRound),
    min: Math.min(...perRound),
    max: Math.max(...perRound),
    aFirst: median(first(true)),
    bFirst: median(first(false)),
  };
}

/** "0.98 (0.91-1.07 over 8 rounds; a first 0.97, b first 0.99)" with the sides' names. */
export function formatRatios(r: RoundRatios, aName: string, bName: string): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
  return `${f(r.median)} (${f(r.min)}-${f(r.max)} over ${r.perRound.length} rounds; ${aName} first ${f(r.aFirst)}, ${bName} first ${f(r.bFirst)})`;
}
