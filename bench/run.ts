/**
 * `npm run bench [-- --quick | --profile[=rows] | --tsx]`: the gateway against its floor (a hand-written
 * undici client of the same upstream) and against the reference server (bare Yoga + jit,
 * bench/reference-server.ts), on the same seeded data and the same pinned window.
 * See README "Performance" and the report printed at the end (also bench/results/latest.json).
 */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import type { Pool } from 'undici';
import { DEMO_CLIENT } from '../simulator/index.js';
import { abRun } from './ab.js';
import { LIVE_ENV, liveScenario, type LiveResult } from './live.js';
import { runLoad, runRounds, runWaves, type LoadOptions } from './load.js';
import {
  buildGateway,
  buildReference,
  ensureDir,
  memoryOf,
  resetPeak,
  RESULTS,
  ROOT,
  startGateway,
  startReference,
  startSimulatorProcess,
  type GatewayChild,
} from './processes.js';
import { compareProfiles, summarizeProfile } from './profile-top.js';
import {
  formatResults,
  machine,
  pairResult,
  targets,
  writeResults,
  type BenchResults,
  type CacheResult,
  type MemoryResult,
  type MemoryRun,
  type PairResult,
  type ServerPhase,
} from './report.js';
import {
  checkReferenceRows,
  checkSameRows,
  fetchToken,
  floorSend,
  gatewaySend,
  keepAlivePool,
  pinnedWindow,
  simulatorCounters,
  windowHasRows,
  type Window,
} from './scenarios.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const tsx = args.includes('--tsx');
/** `--profile` (5000-row pages) or `--profile=<rows>`. */
const profileArg = args.find((a) => a === '--profile' || a.startsWith('--profile='));
const profileRows = profileArg ? Number(profileArg.split('=')[1] ?? 5000) : undefined;
/** `--ab=<git ref>`: CPU per request of this checkout against that commit's gateway (bench/ab.ts). */
const abArg = args.find((a) => a.startsWith('--ab='));
const abRef = abArg?.slice('--ab='.length);
/** `--rounds=<n>`: alternating rounds per page size (gateway and reference server, or --ab's two gateways). */
const roundsArg = args.find((a) => a.startsWith('--rounds='));
const onlyRounds = roundsArg ? Number(roundsArg.slice('--rounds='.length)) : undefined;
/** `--rows=20,5000`: only these page sizes. */
const rowsArg = args.find((a) => a.startsWith('--rows='));
const onlyRows = rowsArg?.slice('--rows='.length).split(',').map(Number);
for (const arg of args) {
  if (!['--quick', '--tsx'].includes(arg) && ![profileArg, abArg, rowsArg, roundsArg].includes(arg)) {
    throw new Error(`unknown flag ${arg} (flags: --quick, --profile[=rows], --tsx, --ab=<git ref>, --rows=<n,...>, --rounds=<n>)`);
  }
}
if (onlyRows?.some((rows) => !(Number.isInteger(rows) && rows >= 1 && rows <= 5000))) {
  throw new Error('--rows=<n,...>: page sizes from 1 to 5000');
}
if (onlyRounds !== undefined && !(Number.isInteger(onlyRounds) && onlyRounds >= 1 && onlyRounds <= 100)) {
  throw new Error('--rounds=<n>: from 1 to 100');
}
if (profileRows !== undefined && !(Number.isInteger(profileRows) && profileRows >= 1 && profileRows <= 5000)) {
  throw new Error('--profile=<rows>: rows from 1 to 5000');
}

const SEED = 1;
const SIZES = onlyRows ?? (quick ? [20, 5000] : [20, 500, 5000]);
/** 10 keeps both sides busy on small pages; 5000-row pages are CPU-bound, 4 keeps latency meaningful. */
const concurrencyFor = (rows: number) => (rows >= 5000 ? 4 : 10);
const TIMING = quick ? { warmupMs: 1000, durationMs: 2000 } : { warmupMs: 2000, durationMs: 8000 };
/** The gateway and the reference server take turns within each page size: 2 s a turn (1 s quick), after a lead-in of a quarter of that. */
const ROUNDS = onlyRounds ?? (quick ? 2 : 4);
const TURN_MS = TIMING.durationMs / (quick ? 2 : 4);
/** 50 concurrent full pages; the smoke run does one wave. */
const MEMORY = { runs: quick ? 1 : 5, waves: quick ? 1 : 3, width: 50, rows: 5000 };
/** The main gateway never caches, so it is compared with the floor on equal terms. */
const NO_CACHE = { AUDIT_CACHE_MAX_BYTES: '0' };

const log = (text: string) => process.stdout.write(`${text}\n`);
const load = (rows: number, cpuOf: Record<string, number>): LoadOptions => ({ concurrency: concurrencyFor(rows), ...TIMING, cpuOf });

/** The gateway's warnings (the tail of its output), next to the results. */
function saveLog(name: string, text: string): void {
  writeFileSync(`${ensureDir(RESULTS)}/${name}`, text);
}

async function auditCallsDuring<T>(simulatorUrl: string, work: () => Promise<T>): Promise<{ value: T; calls: number; tokens: number }> {
  const before = await simulatorCounters(simulatorUrl);
  const value = await work();
  const after = await simulatorCounters(simulatorUrl);
  return { value, calls: after.audit - before.audit, tokens: after.token - before.token };
}

async function tokensDuring(simulatorUrl: string, work: () => Promise<void>) {
  const before = await simulatorCounters(simulatorUrl);
  await work();
  const after = await simulatorCounters(simulatorUrl);
  const byGrant: Record<string, number> = {};
  for (const [grant, n] of Object.entries(after.tokenByGrant)) {
    const diff = n - (before.tokenByGrant[grant] ?? 0);
    if (diff) byGrant[grant] = diff;
  }
  return { token: after.token - before.token, byGrant };
}

type ServerName = 'gateway' | 'reference';

/**
 * Servers under the bench query in alternating rounds (`runRounds`), each phase charged with the
 * server's CPU and the simulator's, and with the upstream calls and token requests made during it.
 */
async function serverLoads(
  simulator: { url: string; pid: number },
  servers: readonly { name: ServerName; pid: number; pool: Pool }[],
  rows: number,
  window: Window,
): Promise<Partial<Record<ServerName, ServerPhase & { tokens: number }>>> {
  const upstream = Object.fromEntries(servers.map(({ name }) => [name, { calls: 0, tokens: 0 }]));
  const results = await runRounds(
    servers.map(({ name, pid, pool }) => ({ name, send: gatewaySend(pool, rows, window), cpuOf: { [name]: pid, simulator: simulator.pid } })),
    {
      concurrency: concurrencyFor(rows),
      warmupMs: TIMING.warmupMs,
      durationMs: ROUNDS * TURN_MS,
      rounds: ROUNDS,
      around: async (name, measure) => {
        const { calls, tokens } = await auditCallsDuring(simulator.url, measure);
        upstream[name]!.calls += calls;
        upstream[name]!.tokens += tokens;
      },
    },
  );
  return Object.fromEntries(
    servers.map(({ name }) => {
      const result = results[name]!;
      return [name, { result, callsPerRequest: upstream[name]!.calls / result.answered, tokens: upstream[name]!.tokens }];
    }),
  );
}

async function memoryScenario(gateway: GatewayChild, window: Window): Promise<MemoryRun> {
  const pool = keepAlivePool(gateway.url, MEMORY.width);
  const before = memoryOf(gateway.pid);
  const reset = resetPeak(gateway.pid);
  let polledMax = before?.rssMB ?? 0;
  const poll = setInterval(() => (polledMax = Math.max(polledMax, memoryOf(gateway.pid)?.rssMB ?? 0)), 100);
  const waves = await runWaves(gatewaySend(pool, MEMORY.rows, window), MEMORY.waves, MEMORY.width);
  clearInterval(poll);
  const after = memoryOf(gateway.pid);
  polledMax = Math.max(polledMax, after?.rssMB ?? 0);
  await pool.close();
  return {
    ...waves,
    rssBeforeMB: before?.rssMB ?? Number.NaN,
    peakRssMB: reset && after ? after.peakMB : polledMax,
    peakMethod: reset && after ? 'VmHWM' : 'VmRSS poll',
    polledMaxRssMB: polledMax,
  };
}

/** Builds the gateway (and with `reference`, the reference server, at the same time) and starts the simulator. */
async function prepare({ reference = false } = {}) {
  if (tsx) log('gateway and reference server: through tsx (--tsx)');
  else {
    log(`building the gateway (build.mjs -> bench/results/build)${reference ? ' and the reference server (bench/tsconfig.reference.json -> bench/results/reference-build)' : ''} ...`);
    const [, referenceErrors] = await Promise.all([buildGateway(), reference ? buildReference() : undefined]);
    if (referenceErrors) log(`WARNING: tsc reported errors in the reference server (emitted anyway):\n${referenceErrors.split('\n').slice(0, 10).join('\n')}`);
  }
  const simulator = await startSimulatorProcess(SEED);
  const window = pinnedWindow(simulator.startedAt);
  log(`simulator ${simulator.url} (pid ${simulator.pid}, seed ${SEED}); window ${new Date(window.fromMillis).toISOString()} .. ${new Date(window.toMillis).toISOString()}`);
  return { simulator, window };
}

/** The newest .cpuprofile written in `dir` since `since`. */
function newestProfile(dir: string, since: number): string {
  const file = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => `${dir}/${name}`)
    .filter((path) => statSync(path).mtimeMs >= since)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!file || !existsSync(file)) throw new Error(`no .cpuprofile written in ${dir}`);
  return file;
}

/** The gateway, then the reference server, each under the profiler with the same load; where each spends. */
async function profileRun(rows: number): Promise<void> {
  const { simulator, window } = await prepare({ reference: true });
  const dir = ensureDir(`${RESULTS}/profiles`);
  const profiled = async (name: 'gateway' | 'reference', start: () => Promise<{ url: string; pid: number; stop: () => Promise<unknown> }>) => {
    const started = Date.now();
    const server = await start();
    const pool = keepAlivePool(server.url, concurrencyFor(rows));
    log(`profiling the ${name} (pid ${server.pid}): ${rows}-row pages, concurrency ${concurrencyFor(rows)}, ${TIMING.durationMs / 1000} s after ${TIMING.warmupMs / 1000} s warm-up`);
    const result = await runLoad(gatewaySend(pool, rows, window), load(rows, { [name]: server.pid }));
    log(`${name}: ${(result.cpuMs[name]! / result.answered).toFixed(3)} CPU ms/request (profiler on), ${result.rps.toFixed(1)} rps, p50 ${result.latencyMs.p50.toFixed(1)} ms, p99 ${result.latencyMs.p99.toFixed(1)} ms, errors ${result.errors}`);
    await pool.close();
    await server.stop();
    const file = newestProfile(dir, started);
    const summary = summarizeProfile(file, 25);
    writeFileSync(file.replace(/\.cpuprofile$/, '.top.txt'), `${summary}\n`);
    log(`\n${name}: ${file}\n\n${summary}\n`);
    return { name, file, requests: result.sent };
  };
  const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
  const gateway = await profiled('gateway', () => startGateway({ simulatorUrl: simulator.url, env: NO_CACHE, tsx, nodeArgs }));
  const reference = await profiled('reference', () => startReference({ simulatorUrl: simulator.url, tsx, nodeArgs }));
  await simulator.stop();
  log(compareProfiles(gateway, reference));
}

/**
 * One gateway process for `work`: started, measured, stopped, its log kept; the token requests it
 * caused are read from the simulator's counters around it.
 */
async function withGateway(
  simulatorUrl: string,
  name: string,
  env: Record<string, string>,
  work: (gateway: GatewayChild) => Promise<void>,
): Promise<BenchResults['tokens'][string]> {
  return tokensDuring(simulatorUrl, async () => {
    const gateway = await startGateway({ simulatorUrl, env, tsx });
    log(`gateway "${name}" ${gateway.url} (pid ${gateway.pid}, AUDIT_CACHE_MAX_BYTES=${env['AUDIT_CACHE_MAX_BYTES'] ?? 'default'})`);
    try {
      await work(gateway);
    } finally {
      await gateway.stop();
      saveLog(`gateway-${name}.log`, gateway.output());
    }
  });
}

async function benchRun(): Promise<void> {
  const { simulator, window } = await prepare({ reference: true });
  const token = await fetchToken(simulator.url, DEMO_CLIENT);
  const maxRows = Math.max(...SIZES, MEMORY.rows);
  const floorPool = keepAlivePool(simulator.url, 10);
  if (!(await windowHasRows(floorPool, window, token, maxRows))) throw new Error(`the window holds no more than ${maxRows} rows`);

  // Up for the fixed-concurrency scenarios only, idle while the gateway is measured (and the reverse).
  const reference = await startReference({ simulatorUrl: simulator.url, tsx });
  log(`reference server ${reference.url} (pid ${reference.pid}): bare graphql-yoga + graphql-jit, SDL resolvers, undici`);
  const referencePool = keepAlivePool(reference.url, 10);

  const pairs: PairResult[] = [];
  let peakUnderLoad: number | undefined;
  const tokens: BenchResults['tokens'] = {};
  tokens['main'] = await withGateway(simulator.url, 'main', NO_CACHE, async (gateway) => {
    const pool = keepAlivePool(gateway.url, 10);
    for (const rows of SIZES) {
      await checkSameRows(pool, floorPool, rows, window, token);
      await checkReferenceRows(pool, referencePool, rows, window);
      log(`${rows} rows, concurrency ${concurrencyFor(rows)}: floor ...`);
      // The simulator's own cost of a page: its CPU while it serves the floor's requests.
      const floor = await runLoad(floorSend(floorPool, rows, window, token), load(rows, { simulator: simulator.pid }));
      log(`${rows} rows, concurrency ${concurrencyFor(rows)}: gateway and reference server, ${ROUNDS} alternating rounds ...`);
      const { gateway: gw, reference: ref } = await serverLoads(
        simulator,
        [
          { name: 'gateway', pid: gateway.pid, pool },
          { name: 'reference', pid: reference.pid, pool: referencePool },
        ],
        rows,
        window,
      );
      pairs.push(pairResult(rows, floor, gw!, gw!.tokens, ref!));
    }
    await pool.close();
    peakUnderLoad = memoryOf(gateway.pid)?.peakMB;
  });
  await referencePool.close();
  const referencePeakUnderLoad = memoryOf(reference.pid)?.peakMB;
  await reference.stop();
  saveLog('reference.log', reference.output());

  // A fresh process per run: its peak is this scenario's alone, and its first 50 requests all need the token at once.
  const memoryRuns: MemoryRun[] = [];
  for (let run = 1; run <= MEMORY.runs; run++) {
    tokens[`memory ${run}`] = await withGateway(simulator.url, `memory-${run}`, NO_CACHE, async (gateway) => {
      log(`memory run ${run} of ${MEMORY.runs}: ${MEMORY.waves} waves of ${MEMORY.width} concurrent ${MEMORY.rows}-row queries ...`);
      memoryRuns.push(await memoryScenario(gateway, window));
    });
  }
  const memory: MemoryResult = { width: MEMORY.width, runs: memoryRuns };

  const uncached = pairs.find((p) => p.rows === 5000)?.gateway;
  let cache: CacheResult = { skipped: 'it is compared with the 5000-row run, which --rows left out' };
  if (uncached) {
    // The variable left unset: the gateway's default size, as deployed.
    tokens['cache'] = await withGateway(simulator.url, 'cache', {}, async (gateway) => {
      log('cache on: 5000 rows, the same closed window ...');
      const pool = keepAlivePool(gateway.url, 10);
      const { result, callsPerRequest } = (await serverLoads(simulator, [{ name: 'gateway', pid: gateway.pid, pool }], 5000, window)).gateway!;
      await pool.close();
      cache = {
        rows: 5000,
        cacheMaxBytes: 'default',
        withCache: result,
        withoutCache: uncached,
        upstreamCallsPerRequest: callsPerRequest,
        speedup: result.rps / uncached.rps,
        p50Ratio: result.latencyMs.p50 / uncached.latencyMs.p50,
      };
    });
  }
  let live: LiveResult | undefined;
  tokens['live'] = await withGateway(simulator.url, 'live', { ...NO_CACHE, ...LIVE_ENV }, async (gateway) => {
    log('live: 1000 subscribers, idle, then events fanned out to all of them ...');
    live = await liveScenario(gateway, simulator.url, { subscribers: 1000, idleMs: quick ? 2000 : 10_000, events: quick ? 2 : 10, log });
  });
  await floorPool.close();
  await simulator.stop();

  const results: BenchResults = {
    date: new Date().toISOString(),
    machine: machine(),
    options: { quick, tsx, seed: SEED, ...TIMING, concurrency: Object.fromEntries(SIZES.map((r) => [r, concurrencyFor(r)])), memory: MEMORY },
    window: { ...window, from: new Date(window.fromMillis).toISOString(), to: new Date(window.toMillis).toISOString() },
    pairs,
    gatewayPeakRssUnderLoadMB: peakUnderLoad,
    referencePeakRssUnderLoadMB: referencePeakUnderLoad,
    memory,
    cache,
    tokens,
    targets: targets(pairs, memory),
    live,
  };
  const path = writeResults(results);
  log(`\n${formatResults(results)}\n\nwritten to ${path.replace(ROOT, '')}`);
}

async function abCompare(ref: string): Promise<void> {
  const { simulator, window } = await prepare();
  const results = await abRun(simulator.url, window, { ref, sizes: SIZES, rounds: onlyRounds ?? (quick ? 2 : 12), concurrencyFor, env: NO_CACHE, log });
  await simulator.stop();
  writeFileSync(`${ensureDir(RESULTS)}/ab.json`, `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), ref, results }, null, 2)}\n`);
}

const started = Date.now();
(abRef ? abCompare(abRef) : profileRows !== undefined ? profileRun(profileRows) : benchRun()).then(
  () => {
    log(`bench done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
