/**
 * `npm run bench -- --ab=<git ref>`: this checkout's gateway against the one of an earlier commit,
 * both compiled, both running at once against one simulator, measured in alternating short rounds
 * (`runRounds`) so that a busy machine weighs on both alike. Reports CPU ms per request of each,
 * per page size.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { runRounds } from './load.js';
import { buildGateway, ensureDir, RESULTS, ROOT, startGateway, type GatewayChild } from './processes.js';
import { gatewaySend, keepAlivePool, type Window } from './scenarios.js';

export interface AbOptions {
  readonly ref: string;
  readonly sizes: readonly number[];
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

export type AbResult = { rows: number; base: AbSide; current: AbSide; change: number }[];

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
          durationMs: options.rounds * (rows >= 5000 ? 4000 : 2000),
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
      const entry = { rows, base: per('base'), current: per('current'), change: 0 };
      entry.change = entry.current.cpuMsPerRequest / entry.base.cpuMsPerRequest - 1;
      results.push(entry);
      options.log(
        `${rows} rows: ${options.ref} ${entry.base.cpuMsPerRequest.toFixed(3)} CPU ms/request (${entry.base.answered} requests), ` +
          `current ${entry.current.cpuMsPerRequest.toFixed(3)} (${entry.current.answered}): ${(entry.change * 100).toFixed(1)} %`,
      );
    }
  } finally {
    await base.stop();
    await current.stop();
  }
  return results;
}
