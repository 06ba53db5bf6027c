/**
 * Reading a pinned window, and the search for its end, which the upstream never tells: one-row probes
 * gallop (p + 8^k, 4 exponents a round) until one is missing, then narrow (4 probes split the gap in 5).
 */
import { UpstreamError } from '../../lib/errors.js';
import type { AuditReportQuery, AuditRowResult } from '../../upstream/types.js';
import type { AuditScope } from './cursor.js';
import { MAX_OFFSET, UPSTREAM_MAX_PAGE_SIZE } from './limits.js';

const PROBES_PER_ROUND = 4;
const GALLOP_BASE = 8;
/** Far more than a search up to MAX_OFFSET takes: a broken upstream. */
const MAX_ROUNDS = 40;

/** Whether the window has a row at each position (one parallel round). */
export type ProbeRound = (positions: readonly number[]) => Promise<readonly boolean[]>;

export interface WindowEnd {
  /** Largest position known to hold a row (-1: none known). */
  readonly lastPresent: number;
  /** Smallest position known to be empty: the window has at most this many rows. */
  readonly firstMissing: number;
}

export interface WindowReader {
  readonly rows: (start: number, count: number) => Promise<readonly AuditRowResult[]>;
  readonly probe: ProbeRound;
}

export const inconsistentWindow = (detail: Record<string, unknown>) =>
  new UpstreamError('UPSTREAM_INVALID_RESPONSE', 'identity', 'The audit report answered inconsistently while paging.', detail);

function reportQuery(scope: AuditScope, startIndex: number, pageSize: number): AuditReportQuery {
  const { fromMillis, toMillis, objectType, action } = scope;
  return { fromMillis, toMillis, objectType: objectType ?? undefined, action: action ?? undefined, startIndex, pageSize };
}

/** `load` is one audit report call; the request's loader dedupes them and batches one tick's calls. */
export function windowReader(
  load: (query: AuditReportQuery) => Promise<{ readonly rows: readonly AuditRowResult[] }>,
  scope: AuditScope,
): WindowReader {
  return {
    async rows(start, count) {
      // A run longer than one call allows is split into calls issued at once: one round trip.
      const calls: Promise<readonly AuditRowResult[]>[] = [];
      for (let offset = start; offset < start + count; offset += UPSTREAM_MAX_PAGE_SIZE) {
        const pageSize = Math.min(UPSTREAM_MAX_PAGE_SIZE, start + count - offset);
        calls.push(load(reportQuery(scope, offset, pageSize)).then((page) => page.rows));
      }
      const rows: AuditRowResult[] = [];
      for (const page of await Promise.all(calls)) {
        rows.push(...page);
        // A short page is the window's end; whatever later calls say cannot be contiguous.
        if (page.length < UPSTREAM_MAX_PAGE_SIZE) break;
      }
      return rows;
    },
    probe: (positions) =>
      Promise.all(positions.map((position) => load(reportQuery(scope, position, 1)).then((page) => page.rows.length > 0))),
  };
}

export async function locateWindowEnd(probe: ProbeRound, knownRow: number, slack: number): Promise<WindowEnd> {
  let lastPresent = knownRow;
  let firstMissing = Number.POSITIVE_INFINITY;
  let gallopExponent = 0;
  for (let round = 0; firstMissing - lastPresent - 1 > slack; round++) {
    if (round === MAX_ROUNDS) throw inconsistentWindow({ lastPresent, firstMissing });
    let positions: number[];
    if (firstMissing === Number.POSITIVE_INFINITY) {
      positions = gallopPositions(lastPresent, gallopExponent);
      gallopExponent += PROBES_PER_ROUND;
    } else {
      positions = narrowingPositions(lastPresent, firstMissing);
    }
    const present = await probe(positions);
    // Monotone in theory; if the upstream disagrees with itself, trust the first gap.
    const roundMissing = Math.min(firstMissing, ...positions.filter((_, i) => !present[i]));
    for (const [i, position] of positions.entries()) {
      if (present[i] && position < roundMissing) lastPresent = Math.max(lastPresent, position);
    }
    // Every probe lies above lastPresent, so firstMissing stays above it.
    firstMissing = roundMissing;
  }
  return { lastPresent, firstMissing };
}

function gallopPositions(from: number, exponent: number): number[] {
  const positions: number[] = [];
  for (let i = 0; i < PROBES_PER_ROUND && from + GALLOP_BASE ** (exponent + i) <= MAX_OFFSET; i++) {
    positions.push(from + GALLOP_BASE ** (exponent + i));
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

/** Known once a page reached the end; otherwise probed from the start, so a closed window's probes are cached pages. */
export async function countWindow(reader: WindowReader, known: number | undefined | Promise<number | undefined>): Promise<number> {
  return (await known) ?? (await locateWindowEnd(reader.probe, -1, 0)).firstMissing;
}
