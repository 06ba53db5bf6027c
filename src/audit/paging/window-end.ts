/**
 * Locates the end of a window whose size the upstream never tells (no total count, no next link).
 *
 * A probe asks for one row (pageSize 1) at a position: present or not. Presence is monotone in
 * the position, so the end is found by galloping, then narrowing, with PROBES_PER_ROUND probes
 * in parallel per round (one round costs one upstream latency):
 *   gallop:  past the last present position p, probe p+8^k for growing k (4 exponents per round,
 *            continuing across rounds) until one is missing;
 *   narrow:  4 evenly spaced probes split the gap between the last present and the first missing
 *            position into 5 parts, until the gap is at most `slack` positions.
 * For a window of n rows that is about log8(n)/4 + log5(n/slack) rounds and 4x as many probes:
 * O(log n). E.g. 24,000 rows, slack 50: 2 gallop + 4 narrowing rounds, 24 one-row probes.
 */
import { UpstreamError } from '../../lib/errors.js';
import { MAX_OFFSET } from './limits.js';

const PROBES_PER_ROUND = 4;
const GALLOP_BASE = 8;
/** A gallop reaches MAX_OFFSET in 17 probes and the narrowing halves far faster; more means a broken upstream. */
const MAX_ROUNDS = 40;

/** Answers, for each position, whether the window has a row there (one parallel round). */
export type ProbeRound = (positions: readonly number[]) => Promise<readonly boolean[]>;

export interface WindowEnd {
  /** Largest position known to hold a row (-1: none known). */
  readonly lastPresent: number;
  /** Smallest position known to be empty: the window has at most this many rows. */
  readonly firstMissing: number;
}

export async function locateWindowEnd(probe: ProbeRound, knownRow: number, slack: number): Promise<WindowEnd> {
  let lastPresent = knownRow;
  let firstMissing = Number.POSITIVE_INFINITY;
  let gallopExponent = 0;
  for (let round = 0; firstMissing - lastPresent - 1 > slack; round++) {
    if (round === MAX_ROUNDS) {
      throw new UpstreamError('UPSTREAM_INVALID_RESPONSE', 'identity', 'The audit report answered inconsistently while paging.', {
        lastPresent,
        firstMissing,
      });
    }
    let positions: number[];
    if (firstMissing === Number.POSITIVE_INFINITY) {
      positions = gallopPositions(lastPresent, gallopExponent);
      gallopExponent += PROBES_PER_ROUND;
    } else {
      positions = narrowingPositions(lastPresent, firstMissing);
    }
    const present = await probe(positions);
    let roundMissing = firstMissing;
    positions.forEach((position, i) => {
      if (!present[i]) roundMissing = Math.min(roundMissing, position);
    });
    // Monotone in theory; if the upstream disagrees with itself, trust the first gap.
    positions.forEach((position, i) => {
      // Stryker disable next-line EqualityOperator: the position at roundMissing is a missing one
      if (present[i] && position < roundMissing) lastPresent = Math.max(lastPresent, position);
    });
    // Every probe lies above lastPresent, so firstMissing stays above it.
    firstMissing = roundMissing;
  }
  return { lastPresent, firstMissing };
}

function gallopPositions(from: number, exponent: number): number[] {
  const positions: number[] = [];
  for (let i = 0; i < PROBES_PER_ROUND; i++) {
    const position = from + GALLOP_BASE ** (exponent + i);
    // Stryker disable next-line EqualityOperator: a row at MAX_OFFSET itself is then found by narrowing, with the same end
    if (position > MAX_OFFSET) break;
    positions.push(position);
  }
  // Past MAX_OFFSET every position counts as missing: probe it once to close the search.
  return positions.length > 0 ? positions : [MAX_OFFSET + 1];
}

function narrowingPositions(lastPresent: number, firstMissing: number): number[] {
  const gap = firstMissing - lastPresent;
  const positions = new Set<number>();
  for (let i = 1; i <= PROBES_PER_ROUND; i++) {
    const position = lastPresent + Math.round((gap * i) / (PROBES_PER_ROUND + 1));
    if (position > lastPresent && position < firstMissing) positions.add(position);
  }
  return [...positions];
}
