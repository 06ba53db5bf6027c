/** The bench's results: the targets, the printed table and bench/results/latest.json. */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import type { LoadResult, WavesResult } from './load.js';
import { ensureDir, RESULTS } from './processes.js';
import type { Window } from './scenarios.js';
import { formatLive, type LiveResult } from './live.js';
import { formatRatios, roundRatios, type RoundRatios } from './ratios.js';

export interface PairResult {
  readonly rows: number;
  readonly floor: LoadResult;
  readonly gateway: LoadResult;
  /** Audit report calls the gateway made upstream per GraphQL request. */
  readonly upstreamCallsPerRequest: number;
  /** gateway rps / floor rps */
  readonly throughputRatio: number;
  /** gateway p50 / floor p50 */
  readonly latencyRatio: number;
  /** The gateway's CPU ms per GraphQL request answered. */
  readonly gatewayCpuMsPerRequest: number;
  /** The simulator's CPU ms per page it served the floor: the upstream's own cost of a page. */
  readonly simulatorCpuMsPerRequest: number;
  /** The simulator's CPU ms per upstream call while serving the gateway (a cross-check of the above). */
  readonly simulatorCpuMsPerGatewayCall: number;
  /** gatewayCpuMsPerRequest / simulatorCpuMsPerRequest */
  readonly cpuRatio: number;
  /** Token endpoint calls during this size's gateway phase (warm-up included). */
  readonly tokenRequests: number;
  /** The reference server (bare Yoga + jit, bench/reference-server.ts) under the same load. */
  readonly reference: LoadResult;
  /** Audit report calls the reference server made upstream per GraphQL request. */
  readonly referenceUpstreamCallsPerRequest: number;
  /** The reference server's CPU ms per GraphQL request answered. */
  readonly referenceCpuMsPerRequest: number;
  /** The simulator's CPU ms per upstream call while serving the reference server. */
  readonly simulatorCpuMsPerReferenceCall: number;
  /** gatewayCpuMsPerRequest / referenceCpuMsPerRequest, over all rounds together. */
  readonly gatewayToReferenceCpuRatio: number;
  /** The same ratio round by round: its median is what the targets judge, its spread the noise. */
  readonly gatewayToReferenceByRound: RoundRatios;
  /** referenceCpuMsPerRequest / simulatorCpuMsPerRequest: what the simulator ratio targets mean next to the yardstick. */
  readonly referenceCpuRatio: number;
}

/** A GraphQL server's phase: its load result and the upstream calls it made per request. */
export interface ServerPhase {
  readonly result: LoadResult;
  readonly callsPerRequest: number;
}

export function pairResult(rows: number, floor: LoadResult, gateway: ServerPhase, tokenRequests: number, reference: ServerPhase): PairResult {
  const gatewayCpuMsPerRequest = (gateway.result.cpuMs['gateway'] ?? Number.NaN) / gateway.result.answered;
  const simulatorCpuMsPerRequest = (floor.cpuMs['simulator'] ?? Number.NaN) / floor.answered;
  const referenceCpuMsPerRequest = (reference.result.cpuMs['reference'] ?? Number.NaN) / reference.result.answered;
  const simulatorCpuMsPerCall = ({ result, callsPerRequest }: ServerPhase) =>
    (result.cpuMs['simulator'] ?? Number.NaN) / (result.answered * callsPerRequest);
  return {
    rows,
    floor,
    gateway: gateway.result,
    upstreamCallsPerRequest: gateway.callsPerRequest,
    throughputRatio: gateway.result.rps / floor.rps,
    latencyRatio: gateway.result.latencyMs.p50 / floor.latencyMs.p50,
    gatewayCpuMsPerRequest,
    simulatorCpuMsPerRequest,
    simulatorCpuMsPerGatewayCall: simulatorCpuMsPerCall(gateway),
    cpuRatio: gatewayCpuMsPerRequest / simulatorCpuMsPerRequest,
    tokenRequests,
    reference: reference.result,
    referenceUpstreamCallsPerRequest: reference.callsPerRequest,
    referenceCpuMsPerRequest,
    simulatorCpuMsPerReferenceCall: simulatorCpuMsPerCall(reference),
    gatewayToReferenceCpuRatio: gatewayCpuMsPerRequest / referenceCpuMsPerRequest,
    // runRounds is given the gateway first.
    gatewayToReferenceByRound: roundRatios(gateway.result, 'gateway', reference.result, 'reference'),
    referenceCpuRatio: referenceCpuMsPerRequest / simulatorCpuMsPerRequest,
  };
}

/** One fresh gateway process through the waves. */
export interface MemoryRun extends WavesResult {
  /** RSS of the fresh gateway process before the first wave. */
  readonly rssBeforeMB: number;
  readonly peakRssMB: number;
  /** VmHWM after a clear_refs reset, or the highest VmRSS polled every 100 ms. */
  readonly peakMethod: 'VmHWM' | 'VmRSS poll';
  readonly polledMaxRssMB: number;
}

/** The same waves in several fresh processes: the target holds for every one. */
export interface MemoryResult {
  readonly width: number;
  readonly runs: MemoryRun[];
}

export type CacheResult =
  | { readonly skipped: string }
  | {
      readonly rows: number;
      readonly cacheMaxBytes: string;
      readonly withCache: LoadResult;
      readonly withoutCache: LoadResult;
      readonly upstreamCallsPerRequest: number;
      readonly speedup: number;
      readonly p50Ratio: number;
    };

export interface Target {
  readonly name: string;
  readonly goal: string;
  readonly measured: string;
  readonly verdict: 'PASS' | 'MISS' | 'N/A';
}

export interface BenchResults {
  readonly date: string;
  readonly machine: Record<string, string | number>;
  readonly options: Record<string, unknown>;
  readonly window: Window & { from: string; to: string };
  readonly pairs: PairResult[];
  /** The main gateway's VmHWM after the fixed-concurrency scenarios. */
  readonly gatewayPeakRssUnderLoadMB: number | undefined;
  /** The reference server's VmHWM after the same scenarios. */
  readonly referencePeakRssUnderLoadMB: number | undefined;
  readonly memory: MemoryResult | undefined;
  readonly cache: CacheResult;
  /** Token endpoint calls per gateway process, from the simulator's counters. */
  readonly tokens: Record<string, { token: number; byGrant: Record<string, number> }>;
  readonly targets: Target[];
  /** Live audit subscriptions: idle and fan-out CPU (bench/live.ts). */
  readonly live?: LiveResult | undefined;
}

export function machine(): Record<string, string | number> {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    totalMemoryMB: Math.round(os.totalmem() / 2 ** 20),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

/** Most CPU per request the gateway may spend, as a multiple of the reference server's, by page size. */
const REFERENCE_CPU_LIMITS: Readonly<Record<number, number>> = { 20: 1.2, 500: 1, 5000: 1 };
const PEAK_RSS_LIMIT_MB = 200;

/** Against the reference server measured in the same run, and the peak of every memory run. */
export function targets(pairs: readonly PairResult[], memory: MemoryResult | undefined): Target[] {
  const verdict = (ok: boolean | undefined): Target['verdict'] => (ok === undefined ? 'N/A' : ok ? 'PASS' : 'MISS');
  const referenceTarget = (p: PairResult, max: number): Target => ({
    name: `CPU per request, ${p.rows}-row pages`,
    goal: `gateway <= ${max} x reference (lean Yoga + jit), median round`,
    measured: `${formatRatios(p.gatewayToReferenceByRound, 'gw', 'ref')}`,
    verdict: verdict(
      p.reference.errors === 0 && p.gateway.errors === 0 && Number.isFinite(p.gatewayToReferenceByRound.median)
        ? p.gatewayToReferenceByRound.median <= max
        : undefined,
    ),
  });
  const peaks = memory?.runs.map((run) => run.peakRssMB) ?? [];
  return [
    ...pairs.flatMap((p) => (p.rows in REFERENCE_CPU_LIMITS ? [referenceTarget(p, REFERENCE_CPU_LIMITS[p.rows]!)] : [])),
    {
      name: `peak RSS, ${memory?.width ?? 'concurrent'} concurrent 5000-row queries, every run`,
      goal: `<= ${PEAK_RSS_LIMIT_MB} MB`,
      measured: memory ? `${Math.min(...peaks).toFixed(0)}-${Math.max(...peaks).toFixed(0)} MB over ${peaks.length} runs` : 'not run',
      verdict: verdict(memory?.runs.every((run) => run.errors === 0) ? Math.max(...peaks) <= PEAK_RSS_LIMIT_MB : undefined),
    },
  ];
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatResults(r: BenchResults): string {
  const out: string[] = [];
  out.push(`machine: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.totalMemoryMB} MB, node ${r.machine.node}`);
  out.push(`window: ${r.window.from} .. ${r.window.to} (closed, same for floor, gateway and reference server)\n`);
  out.push(
    table(
      ['rows', 'conc', 'gw CPU ms/req', 'sim CPU ms/req', 'gw/sim', 'ref CPU ms/req', 'gw/ref', 'gw p50', 'gw p99', 'gw rps', 'floor p50', 'floor p99', 'floor rps', 'calls/req', 'tokens', 'errors f/g'],
      r.pairs.map((p) => [
        String(p.rows),
        String(p.gateway.concurrency),
        f(p.gatewayCpuMsPerRequest, 3),
        f(p.simulatorCpuMsPerRequest, 3),
        `${f(p.cpuRatio, 2)}x`,
        f(p.referenceCpuMsPerRequest, 3),
        `${f(p.gatewayToReferenceCpuRatio, 2)}x`,
        `${f(p.gateway.latencyMs.p50)} ms`,
        `${f(p.gateway.latencyMs.p99)} ms`,
        f(p.gateway.rps),
        `${f(p.floor.latencyMs.p50)} ms`,
        `${f(p.floor.latencyMs.p99)} ms`,
        f(p.floor.rps),
        f(p.upstreamCallsPerRequest, 2),
        String(p.tokenRequests),
        `${p.floor.errors}/${p.gateway.errors}`,
      ]),
    ),
  );
  out.push(
    '\nCPU: utime+stime from /proc/<pid>/stat over each measured phase / requests answered; sim = the simulator serving the floor ' +
      `(while serving the gateway: ${r.pairs.map((p) => `${p.rows} rows ${f(p.simulatorCpuMsPerGatewayCall, 3)} ms/call`).join(', ')})`,
  );
  out.push(
    '\nref = the reference server (bare graphql-yoga + graphql-jit, SDL resolvers, undici; bench/reference-server.ts), same query, rows and load:\n' +
      table(
        ['rows', 'ref CPU ms/req', 'ref/sim', 'gw/ref', 'gw/ref by round', 'ref p50', 'ref p99', 'ref rps', 'calls/req', 'sim ms/call', 'errors'],
        r.pairs.map((p) => [
          String(p.rows),
          f(p.referenceCpuMsPerRequest, 3),
          `${f(p.referenceCpuRatio, 2)}x`,
          `${f(p.gatewayToReferenceCpuRatio, 2)}x`,
          `${f(p.gatewayToReferenceByRound.median, 2)}x (${f(p.gatewayToReferenceByRound.min, 2)}-${f(p.gatewayToReferenceByRound.max, 2)})`,
          `${f(p.reference.latencyMs.p50)} ms`,
          `${f(p.reference.latencyMs.p99)} ms`,
          f(p.reference.rps),
          f(p.referenceUpstreamCallsPerRequest, 2),
          f(p.simulatorCpuMsPerReferenceCall, 3),
          String(p.reference.errors),
        ]),
      ),
  );
  if (r.gatewayPeakRssUnderLoadMB !== undefined) out.push(`\ngateway peak RSS during the scenarios above: ${f(r.gatewayPeakRssUnderLoadMB, 0)} MB`);
  if (r.referencePeakRssUnderLoadMB !== undefined) out.push(`reference server peak RSS during the same scenarios: ${f(r.referencePeakRssUnderLoadMB, 0)} MB`);
  const m = r.memory;
  for (const [i, run] of (m?.runs ?? []).entries()) {
    out.push(
      `memory run ${i + 1}: ${run.waves} waves of ${run.width} concurrent 5000-row queries: peak RSS ${f(run.peakRssMB, 0)} MB (${run.peakMethod}; ` +
        `fresh process, RSS at start ${f(run.rssBeforeMB, 0)} MB), waves ${run.waveMs.join(' / ')} ms, p50 ${f(run.latencyMs.p50)} ms, errors ${run.errors}`,
    );
  }
  const c = r.cache;
  if ('skipped' in c) out.push(`cache: skipped (${c.skipped})`);
  else {
    out.push(
      `cache (AUDIT_CACHE_MAX_BYTES=${c.cacheMaxBytes}), ${c.rows} rows, closed window: ${f(c.withoutCache.rps)} -> ${f(c.withCache.rps)} rps ` +
        `(${f(c.speedup, 2)}x), p50 ${f(c.withoutCache.latencyMs.p50)} -> ${f(c.withCache.latencyMs.p50)} ms, ` +
        `p99 ${f(c.withoutCache.latencyMs.p99)} -> ${f(c.withCache.latencyMs.p99)} ms, upstream calls/req ${f(c.upstreamCallsPerRequest, 3)}, errors ${c.withCache.errors}`,
    );
  }
  out.push(
    `token requests per gateway process: ${Object.entries(r.tokens)
      .map(([name, t]) => `${name} ${t.token} (${Object.entries(t.byGrant).map(([g, n]) => `${g} ${n}`).join(', ') || 'none'})`)
      .join('; ')}\n`,
  );
  if (r.live) out.push(`${formatLive(r.live)}\n`);
  out.push(table(['target', 'goal', 'measured', 'verdict'], r.targets.map((t) => [t.name, t.goal, t.measured, t.verdict])));
  const runs: [string, { errorKinds: Record<string, number> }][] = [
    ...r.pairs.flatMap((p): [string, LoadResult][] => [
      [`${p.rows} rows floor`, p.floor],
      [`${p.rows} rows gateway`, p.gateway],
      [`${p.rows} rows reference`, p.reference],
    ]),
    ...(m ? m.runs.map((run, i) => [`memory run ${i + 1}`, run] as [string, MemoryRun]) : []),
    ...('skipped' in c ? [] : [['cache', c.withCache] as [string, LoadResult]]),
  ];
  for (const [name, run] of runs) {
    const kinds = Object.entries(run.errorKinds);
    if (kinds.length) out.push(`\nerrors in ${name}: ${kinds.map(([message, n]) => `${n} x "${message}"`).join('; ')}`);
  }
  return out.join('\n');
}

export function writeResults(r: BenchResults, name = 'latest.json'): string {
  const path = `${ensureDir(RESULTS)}/${name}`;
  writeFileSync(path, `${JSON.stringify(r, null, 2)}\n`);
  return path;
}
