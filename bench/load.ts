/**
 * A fixed-concurrency load loop: `concurrency` workers each send one request, wait for its whole
 * body and its parsing, record the latency, and send the next, for a fixed duration after a
 * warm-up. The same loop drives the floor and the gateway, so both are measured the same way.
 */
import { cpuMsOf } from './processes.js';

/** One request: resolves once the answer is read, parsed and checked (with its body size); throws on a wrong answer. */
export type Send = () => Promise<number>;

export interface LoadOptions {
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Processes whose CPU time (utime + stime) is sampled around the measured phase, by name. */
  readonly cpuOf?: Readonly<Record<string, number>>;
}

export interface LoadResult {
  readonly concurrency: number;
  readonly durationMs: number;
  /** Requests started in the measured window and completed without error. */
  readonly requests: number;
  readonly errors: number;
  readonly firstError: string | undefined;
  /** Error messages (first 120 characters) and how often each occurred, warm-up included. */
  readonly errorKinds: Record<string, number>;
  /** Every request sent, warm-up included (to relate upstream call counters to). */
  readonly sent: number;
  readonly rps: number;
  readonly latencyMs: Percentiles;
  readonly bytesPerResponse: number;
  /**
   * CPU ms each sampled process spent in the measured phase. It starts and ends with no request in
   * flight, so this divided by the requests it answered is the CPU one request cost.
   */
  readonly cpuMs: Record<string, number>;
  /** Requests answered in the measured phase, errors included (what cpuMs is divided by). */
  readonly answered: number;
  /** Each measured phase on its own, in round order (one for `runLoad`). */
  readonly phases: readonly PhaseCost[];
}

/** What one measured phase cost: the CPU of each sampled process and the requests it answered. */
export interface PhaseCost {
  readonly cpuMs: Readonly<Record<string, number>>;
  readonly answered: number;
}

export interface Percentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Errors after which a phase stops early: the numbers would mean nothing. */
const MAX_ERRORS = 100;

const now = () => process.hrtime.bigint();

function sampleCpu(pids: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuMsOf(pid) ?? Number.NaN]));
}

/** Counts errors by message; remembers the first. */
class ErrorTally {
  count = 0;
  first: string | undefined;
  readonly kinds: Record<string, number> = {};

  add(error: unknown): void {
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 120);
    this.count++;
    this.first ??= message;
    this.kinds[message] = (this.kinds[message] ?? 0) + 1;
  }
}

/** Nearest-rank percentiles over every recorded latency (exact: the whole array is kept and sorted). */
export function percentiles(latencies: readonly number[]): Percentiles {
  const sorted = Float64Array.from(latencies).sort();
  const n = sorted.length;
  if (n === 0) return { p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, max: Number.NaN, mean: Number.NaN };
  const at = (p: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { p50: at(50), p90: at(90), p99: at(99), max: sorted[n - 1]!, mean: sum / n };
}

async function phase(send: Send, concurrency: number, durationMs: number, errors: ErrorTally, pids: Readonly<Record<string, number>> = {}) {
  const latencies: number[] = [];
  const cpuBefore = sampleCpu(pids);
  const errorsBefore = errors.count;
  let bytes = 0;
  const start = now();
  const end = start + BigInt(Math.round(durationMs * 1e6));
  let lastDone = start;
  const worker = async () => {
    while (now() < end && errors.count < MAX_ERRORS) {
      const t0 = now();
      try {
        // Not `bytes += await send()`: that reads `bytes` before the wait, losing what other workers add.
        const size = await send();
        bytes += size;
        latencies.push(Number(now() - t0) / 1e6);
      } catch (error) {
        errors.add(error);
      }
      lastDone = now();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  // Requests started before `end` all count; the window closes when the last of them completes.
  const elapsedMs = Number(lastDone - start) / 1e6;
  const cpuAfter = sampleCpu(pids);
  const cpuMs = Object.fromEntries(Object.keys(pids).map((name) => [name, cpuAfter[name]! - cpuBefore[name]!]));
  return { latencies, errors: errors.count - errorsBefore, bytes, elapsedMs, cpuMs };
}

export async function runLoad(send: Send, options: LoadOptions): Promise<LoadResult> {
  const { only } = await runRounds([{ name: 'only', send, cpuOf: options.cpuOf }], { ...options, rounds: 1 });
  return only!;
}

/** One server of a run in rounds: its load, and the processes whose CPU its phases are charged. */
export interface RoundSide {
  readonly name: string;
  readonly send: Send;
  readonly cpuOf?: Readonly<Record<string, number>> | undefined;
}

export interface RoundsOptions {
  readonly concurrency: number;
  /** Each side's warm-up, once, before the first round. */
  readonly warmupMs: number;
  /**
   * Each side's unmeasured load right before each of its measured phases (default: a quarter of a
   * phase when there are several sides). A server idle while the other was measured starts cold
   * (smaller young generation, caches taken by others); one measured twice in a row does not.
   * Without this lead-in, the side that the order puts twice in a row more often looks cheaper.
   */
  readonly settleMs?: number;
  /** Each side's measured time, split evenly over the rounds. */
  readonly durationMs: number;
  readonly rounds: number;
  /** Wraps each measured phase of a side, to read counters before and after it. */
  readonly around?: (side: string, measure: () => Promise<void>) => Promise<void>;
}

/** What a side's measured phases add up to. */
class SideTotals {
  readonly errors = new ErrorTally();
  readonly latencies: number[] = [];
  measuredErrors = 0;
  unmeasuredSent = 0;
  bytes = 0;
  elapsedMs = 0;
  readonly cpuMs: Record<string, number> = {};
  readonly phases: PhaseCost[] = [];

  add(measured: Awaited<ReturnType<typeof phase>>): void {
    this.phases.push({ cpuMs: measured.cpuMs, answered: measured.latencies.length + measured.errors });
    for (const latency of measured.latencies) this.latencies.push(latency);
    this.measuredErrors += measured.errors;
    this.bytes += measured.bytes;
    this.elapsedMs += measured.elapsedMs;
    for (const [name, ms] of Object.entries(measured.cpuMs)) this.cpuMs[name] = (this.cpuMs[name] ?? 0) + ms;
  }

  result(concurrency: number): LoadResult {
    const requests = this.latencies.length;
    return {
      concurrency,
      durationMs: Math.round(this.elapsedMs),
      requests,
      errors: this.errors.count,
      firstError: this.errors.first,
      errorKinds: this.errors.kinds,
      sent: requests + this.measuredErrors + this.unmeasuredSent,
      rps: requests / (this.elapsedMs / 1000),
      latencyMs: percentiles(this.latencies),
      bytesPerResponse: requests > 0 ? Math.round(this.bytes / requests) : 0,
      cpuMs: this.cpuMs,
      answered: requests + this.measuredErrors,
      phases: this.phases,
    };
  }
}

/**
 * Servers under the same load in alternating rounds, the order reversed every other round (ABBA),
 * so that a machine whose speed drifts during the run weighs on every side alike: on a shared
 * machine, one server measured after another also measures how the machine changed between them.
 * Each measured phase follows a lead-in of its own side (`settleMs`), so none starts colder than
 * the others. Each side's result sums its rounds (its percentiles over every request it answered)
 * and keeps each round's cost in `phases`.
 */
export async function runRounds(sides: readonly RoundSide[], options: RoundsOptions): Promise<Record<string, LoadResult>> {
  const totals = new Map(sides.map((side) => [side.name, new SideTotals()]));
  const around = options.around ?? ((_side: string, measure: () => Promise<void>) => measure());
  const phaseMs = options.durationMs / options.rounds;
  const settleMs = options.settleMs ?? (sides.length > 1 ? phaseMs / 4 : 0);
  const unmeasured = async (side: RoundSide, ms: number) => {
    if (ms <= 0) return;
    const load = await phase(side.send, options.concurrency, ms, totals.get(side.name)!.errors);
    totals.get(side.name)!.unmeasuredSent += load.latencies.length + load.errors;
  };
  for (const side of sides) await unmeasured(side, options.warmupMs);
  for (let round = 0; round < options.rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const total = totals.get(side.name)!;
      await unmeasured(side, settleMs);
      await around(side.name, async () => {
        total.add(await phase(side.send, options.concurrency, phaseMs, total.errors, side.cpuOf));
      });
    }
  }
  return Object.fromEntries([...totals].map(([name, total]) => [name, total.result(options.concurrency)]));
}

export interface WavesResult {
  readonly waves: number;
  readonly width: number;
  readonly requests: number;
  readonly errors: number;
  readonly firstError: string | undefined;
  readonly errorKinds: Record<string, number>;
  /** Wall time of each wave (all of its requests at once, until the last completes). */
  readonly waveMs: number[];
  readonly latencyMs: Percentiles;
}

/** `waves` times: `width` requests at once, then wait for all of them. */
export async function runWaves(send: Send, waves: number, width: number): Promise<WavesResult> {
  const latencies: number[] = [];
  const waveMs: number[] = [];
  const errors = new ErrorTally();
  for (let w = 0; w < waves; w++) {
    const started = now();
    await Promise.all(
      Array.from({ length: width }, async () => {
        const t0 = now();
        try {
          await send();
          latencies.push(Number(now() - t0) / 1e6);
        } catch (error) {
          errors.add(error);
        }
      }),
    );
    waveMs.push(Math.round(Number(now() - started) / 1e6));
  }
  return {
    waves,
    width,
    requests: latencies.length,
    errors: errors.count,
    firstError: errors.first,
    errorKinds: errors.kinds,
    waveMs,
    latencyMs: percentiles(latencies),
  };
}
