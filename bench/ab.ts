/**
 * `npm run bench -- --ab=<git ref>`: this checkout's gateway against the one of an earlier commit,
 * both compiled, both running at once against one simulator, measured in alternating short rounds
 * (`runRounds`: ABBA, a lead-in before every measured phase) so that a busy machine weighs on both
 * alike. Reports CPU ms per request of each, per page size, and the ratio round by round: its
 * median is the verdict, its spread the noise. `--ab=HEAD` measures that noise alone.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { runRounds } from './load.js';
import { formatRatios, roundRatios, type RoundRatios } from './ratios.js';
import { buildGateway, ensureDir, RESULTS, ROOT, startGateway, type GatewayChild } from './processes.js';
import { gatewaySend, keepAlivePool, type Window } from './scenarios.js';

export interface AbOptions {
  readonly ref: string;
  readonly sizes: readonly number[];
  /** Measured rounds per page size (each side once per round). */
  readonly rounds: number;
  readonly concurrencyFor: (rows: number) => number;
  readonly env: Record<string, string>;
  readonly log: (text: string) => void;
}

export interface AbSide {
  readonly cpuMs: number;
  readonly answered: number;
  readonly cpuMsPerRequest: number;
}

/** `change`: the median round's current / base CPU per request, less 1; `ratios`: every round's. */
export type AbResult = { rows: number; base: AbSide; current: AbSide; change: number; ratios: RoundRatios }[];

/** One measured phase per side and round: 1 s (2 s at 5000 rows), each after a lead-in of a third of that; short turns keep the two sides of a round close in time. */
const phaseMs = (rows: number) => (rows >= 5000 ? 2000 : 1000);

/** The paths a ref's build reads; a ref older than the simulator's own folder has no simulator/. */
const BUILD_INPUTS = ['src', 'simulator', 'build.mjs', 'tsconfig.json', 'package.json'];

/** The ref's sources, extracted inside the checkout (node_modules resolve upwards) and built by the ref's own build.mjs. */
async function buildRef(ref: string): Promise<string> {
  const dir = `${RESULTS}/ab/src-tree/`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const present = execFileSync('git', ['ls-tree', '--name-only', ref, ...BUILD_INPUTS], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
  const archive = execFileSync('git', ['archive', ref, ...present], { cwd: ROOT, maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  const out = `${RESULTS}/ab/build`;
  await buildGateway(dir, out, `${dir}build.mjs`);
  return `${out}/index.js`;
}

export async function abRun(simulatorUrl: string, window: Window, options: AbOptions): Promise<AbResult> {
  options.log(`building ${options.ref} for comparison ...`);
  const baseEntry = await buildRef(options.ref);
  ensureDir(RESULTS);
  const base = await startGateway({ simulatorUrl, env: options.env, entry: baseEntry });
  const current = await startGateway({ simulatorUrl, env: options.env });
  const gateways: Record<'base' | 'current', GatewayChild> = { base, current };
  const results: AbResult = [];
  try {
    for (const rows of options.sizes) {
      const pools = { base: keepAlivePool(base.url, options.concurrencyFor(rows)), current: keepAlivePool(current.url, options.concurrencyFor(rows)) };
      const measured = await runRounds(
        (['base', 'current'] as const).map((name) => ({
          name,
          send: gatewaySend(pools[name], rows, window),
          cpuOf: { gateway: gateways[name].pid },
        })),
        {
          concurrency: options.concurrencyFor(rows),
          warmupMs: 1000,
          settleMs: phaseMs(rows) / 3,
          durationMs: options.rounds * phaseMs(rows),
          rounds: options.rounds,
        },
      );
      await Promise.all([pools.base.close(), pools.current.close()]);
      const per = (name: 'base' | 'current'): AbSide => {
        const result = measured[name]!;
        if (result.errors > 0) throw new Error(`${name} gateway: ${result.firstError}`);
        const cpuMs = result.cpuMs['gateway']!;
        return { cpuMs, answered: result.answered, cpuMsPerRequest: cpuMs / result.answered };
      };
      // `current` runs second in even rounds.
      const ratios = roundRatios(measured['current']!, 'gateway', measured['base']!, 'gateway', false);
      const entry = { rows, base: per('base'), current: per('current'), change: ratios.median - 1, ratios };
      results.push(entry);
      options.log(
        `${rows} rows: ${options.ref} ${entry.base.cpuMsPerRequest.toFixed(3)} CPU ms/request (${entry.base.answered} requests), ` +
          `current ${entry.current.cpuMsPerRequest.toFixed(3)} (${entry.current.answered}); ` +
          `current/${options.ref} by round ${formatRatios(ratios, 'current', options.ref)}: ${(entry.change * 100).toFixed(1)} %` +
          `\n  rounds: ${ratios.perRound.map((r) => r.toFixed(2)).join(' ')}`,
      );
    }
  } finally {
    await base.stop();
    await current.stop();
  }
  return results;
}
