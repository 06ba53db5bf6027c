/**
 * `npm run soak [-- --minutes N]` (default 10): the production build in upstream mode (an API key)
 * against the simulator in a process of its own, under mixed traffic (bench/soak-traffic.ts) and
 * live subscribers that resume (bench/soak-live.ts), while the simulator's faults change phase by
 * phase (bench/soak-faults.ts). Prints the figures, writes them as JSON under bench/results/, and
 * exits 1 when a promise is broken (bench/soak-verdict.ts). Options: --minutes N, --rate R
 * (requests/s, default 20), --subscribers S (per filter, default 10).
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { request } from 'undici';
import { controlAt, PHASES, runSchedule } from './soak-faults.js';
import { createLive } from './soak-live.js';
import { createTraffic, newTally } from './soak-traffic.js';
import { brokenPromises, DEFAULT_LIMITS, trendOf, type Sample } from './soak-verdict.js';
import { buildGateway, cpuMsOf, ensureDir, memoryOf, RESULTS, startGateway, startSimulatorProcess, type SimulatorChild } from './processes.js';

const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '10' }, rate: { type: 'string', default: '20' }, subscribers: { type: 'string', default: '10' } },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const perFilter = Number(values.subscribers);
if (!(minutes > 0) || !(rate > 0) || !(perFilter > 0)) throw new Error('--minutes, --rate and --subscribers must be positive numbers');

const REQUEST_TIMEOUT_MS = 30_000;
const POLL_MS = 1000;
const runMs = minutes * 60_000;
const phaseMs = runMs / PHASES.length;
// Pollers give up within the outage phase, as they would in a minute-long one with the default 60 s.
const giveUpMs = Math.min(60_000, Math.round(phaseMs / 2));
const OBJECT_TYPES = ['SoakAlpha', 'SoakBeta', 'SoakGamma', 'SoakDelta', 'SoakEpsilon'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (text: string) => process.stdout.write(`[soak ${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${text}\n`);
let startedAt = Date.now();

log(`building the gateway (npm run build's bundle)`);
await buildGateway();
let seed = 1;
let simulator: SimulatorChild = await startSimulatorProcess(seed);
const simulatorPort = Number(new URL(simulator.url).port);

const PINO_LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const logLevels: Record<string, number> = {};
const logMessages: Record<string, number> = {};
/** The fault phase of the moment: where a request started, or where the gateway logged it done. */
let phase = 'start';
/** The gateway's own time per request (its access log), by the phase it was logged in. */
const gatewayDurationsByPhase: Record<string, number[]> = {};
/** The same by request id, for the slowest requests the client saw. */
const gatewayDurations = new Map<string, number>();
const onLine = (line: string) => {
  if (!line.trim()) return;
  let entry: { level?: number; msg?: string; durationMs?: number; requestId?: unknown };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    logLevels['(not JSON)'] = (logLevels['(not JSON)'] ?? 0) + 1;
    return;
  }
  if (entry.msg === 'request' && typeof entry.durationMs === 'number') {
    (gatewayDurationsByPhase[phase] ??= []).push(entry.durationMs);
    if (typeof entry.requestId === 'string' && entry.requestId.startsWith('soak-')) gatewayDurations.set(entry.requestId, entry.durationMs);
  }
  const level = PINO_LEVELS[entry.level ?? 0] ?? String(entry.level);
  logLevels[level] = (logLevels[level] ?? 0) + 1;
  if ((entry.level ?? 0) >= 40) {
    const key = `${level}: ${String(entry.msg).slice(0, 100)}`;
    logMessages[key] = (logMessages[key] ?? 0) + 1;
  }
};
const gateway = await startGateway({
  simulatorUrl: simulator.url,
  onLine,
  env: {
    LOG_LEVEL: 'info',
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    AUDIT_LIVE_POLL_MS: String(POLL_MS),
    AUDIT_LIVE_GIVE_UP_MS: String(giveUpMs),
  },
});
startedAt = Date.now();
// The client's own delays add to every time it takes: its event loop's are reported with them.
const soakLoopDelay = monitorEventLoopDelay({ resolution: 20 });
soakLoopDelay.enable();
const cpuAtStart = cpuMsOf(gateway.pid) ?? 0;
const ownCpuAtStart = process.cpuUsage();
const loadAtStart = loadavg()[0]!;
log(`gateway ${gateway.url} (pid ${gateway.pid}), simulator ${simulator.url}; ${minutes} min, ${rate} requests/s, ${PHASES.length} fault phases of ${(phaseMs / 1000).toFixed(0)} s`);

// Memory and /healthz, sampled for the whole run.
const rss: Sample[] = [];
const heap: Sample[] = [];
const healthz: number[] = [];
let healthzFailures = 0;
const heapUsedMB = async () => {
  const res = await request(`${gateway.url}/metrics`, { headersTimeout: 5000 });
  const text = await res.body.text();
  const match = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  return match ? Number(match[1]) / 1024 / 1024 : undefined;
};
let sampling = true;
const sampler = (async () => {
  for (let i = 0; sampling; i++) {
    const memory = memoryOf(gateway.pid);
    if (memory) rss.push({ at: Date.now() - startedAt, value: memory.rssMB });
    if (i % 5 === 0) {
      const used = await heapUsedMB().catch(() => undefined);
      if (used !== undefined) heap.push({ at: Date.now() - startedAt, value: used });
    }
    await sleep(1000);
  }
})();
// /healthz is timed from a thread of its own, so the soak's own load does not add to what it measures.
const prober = new Worker(
  `const { parentPort, workerData } = require('node:worker_threads');
  const http = require('node:http');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let running = true;
  parentPort.on('message', () => { running = false; });
  const probe = () => {
    if (!running) return parentPort.close();
    const started = performance.now();
    const req = http.get(workerData.url + '/healthz', { agent, timeout: 10000 }, (res) => {
      res.resume();
      res.on('end', () => {
        parentPort.postMessage(res.statusCode === 200 ? performance.now() - started : -1);
        setTimeout(probe, 500);
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => { parentPort.postMessage(-1); setTimeout(probe, 500); });
  };
  probe();`,
  { eval: true, workerData: { url: gateway.url } },
);
prober.on('message', (ms: number) => (ms < 0 ? healthzFailures++ : healthz.push(ms)));
const proberDone = new Promise((resolve) => prober.once('exit', resolve));

// Live subscribers first, then the records they are to receive.
const live = createLive({ gatewayUrl: gateway.url, objectTypes: OBJECT_TYPES, subscribersPerFilter: perFilter, cutAfterMs: [20_000, 90_000] });
live.start();
await sleep(3000);
let inserting = true;
let restarting = false;
const inserter = (async () => {
  for (let i = 0; inserting; i++) {
    // One record in ten arrives late (stamped 15 s back), as the upstream may ingest it.
    if (!restarting) await live.insert(simulator.url, OBJECT_TYPES[i % OBJECT_TYPES.length]!, i % 10 === 9 ? 15_000 : 0);
    await sleep(1000);
  }
})();

// Traffic, open loop.
const tally = newTally();
const traffic = createTraffic({ url: gateway.url, tally, clientTimeoutMs: REQUEST_TIMEOUT_MS + 60_000, maxInFlight: 400, phase: () => phase });
const pending = new Set<Promise<unknown>>();
const ticker = setInterval(() => {
  const p = traffic.fire();
  pending.add(p);
  void p.finally(() => pending.delete(p));
}, 1000 / rate);

const control = controlAt(() => simulator.url);
let restarts = 0;
await runSchedule(
  {
    control,
    async restart(downMs) {
      // The simulator forgets its records when it stops: let the subscribers have them first.
      restarting = true;
      const settled = await live.settle(Math.max(5000, Math.min(20_000, phaseMs / 2)));
      const lost = live.undelivered();
      live.excuse(lost);
      log(`restart: ${settled ? 'every record delivered' : `${lost.size} records not yet delivered, lost with the simulator`}; down for ${downMs / 1000} s`);
      await simulator.stop(5000);
      await sleep(downMs);
      simulator = await startSimulatorProcess(++seed, simulatorPort);
      restarts++;
      restarting = false;
    },
  },
  phaseMs,
  (name) => {
    phase = name;
    log(`phase: ${name}`);
  },
);

clearInterval(ticker);
// The trend is that of the process under load; what follows is the drain.
const underLoad = rss.length;
const gatewayCpuShare = ((cpuMsOf(gateway.pid) ?? 0) - cpuAtStart) / (Date.now() - startedAt);
const ownCpu = process.cpuUsage(ownCpuAtStart);
const soakCpuShare = (ownCpu.user + ownCpu.system) / 1000 / (Date.now() - startedAt);
const loadAtEnd = loadavg()[0]!;
soakLoopDelay.disable();
await control('clear-faults');
await control('latency', { ms: 0 });
log(`traffic stopped; waiting for ${pending.size} requests in flight`);
await Promise.race([Promise.all(pending), sleep(REQUEST_TIMEOUT_MS + 65_000)]);
inserting = false;
await inserter;
const settled = await live.settle(giveUpMs + 30_000);
log(settled ? 'every live record delivered' : `${live.undelivered().size} live records still undelivered`);
await live.stop();
sampling = false;
prober.postMessage('stop');
await Promise.all([sampler, Promise.race([proberDone, sleep(15_000)])]);
const exitCode = await gateway.stop(15_000);
await simulator.stop(5000);

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
healthz.sort((a, b) => a - b);
const liveFigures = live.figures();
const rssTrend = trendOf(rss.slice(0, underLoad));
const rssAfterDrain = rss.at(-1)?.value;
const heapTrend = heap.length > 0 ? trendOf(heap) : undefined;
const broken = brokenPromises({
  statuses: tally.statuses,
  codes: tally.codes,
  codeless: tally.codeless + live.tally.codeless,
  live: liveFigures,
  rssMB: rssTrend,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  longestRequestMs: tally.longestMs,
  unanswered: tally.unanswered,
});
if (exitCode !== 0) broken.push(`the gateway exited with ${exitCode} on SIGTERM`);
const answered = Object.values(tally.statuses).reduce((sum, n) => sum + n, 0);
/** Count, p50, p99 and max of each list of durations. */
const percentilesOf = (lists: Record<string, number[]>) =>
  Object.fromEntries(
    Object.entries(lists).map(([name, list]) => {
      const sorted = [...list].sort((a, b) => a - b);
      return [name, { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) }];
    }),
  );
const durationPercentiles = percentilesOf(tally.durations);
const requestsByPhase = percentilesOf(tally.durationsByPhase);
const gatewayByPhase = percentilesOf(gatewayDurationsByPhase);
const slowest = tally.slowest.map((slow) => ({ ...slow, gatewayMs: gatewayDurations.get(slow.requestId) }));
const slowestInGateway = [...gatewayDurations]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 10)
  .map(([requestId, gatewayMs]) => ({ requestId, gatewayMs, ...tally.sent.get(requestId) }));
const report = {
  minutes,
  rate,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  pollMs: POLL_MS,
  giveUpMs,
  phases: PHASES.map((p) => p.name),
  phaseSeconds: phaseMs / 1000,
  answers: { total: answered, byStatus: tally.statuses, byCode: tally.codes, byKind: tally.byKind },
  internalServerErrors: tally.codes['INTERNAL_SERVER_ERROR'] ?? 0,
  codeless: tally.codeless + live.tally.codeless,
  unanswered: tally.unanswered,
  abandonedStreams: tally.abandoned,
  skipped: tally.skipped,
  longestRequest: { ms: tally.longestMs, kind: tally.longestKind },
  durations: durationPercentiles,
  /** As the client timed them, by the phase each started in; and as the gateway logged them, by the phase it logged them in. */
  durationsByPhase: { requests: requestsByPhase, gateway: gatewayByPhase },
  /** The slowest requests as the client timed them, with the gateway's time for each (its access log). */
  slowest,
  /** The requests the gateway took longest over, by its access log. */
  slowestInGateway,
  memory: {
    rssMB: rssTrend,
    rssAfterDrainMB: rssAfterDrain,
    heapUsedMB: heapTrend,
  },
  machine: {
    cores: cpus().length,
    loadAverageAtStart: loadAtStart,
    loadAverageAtEnd: loadAtEnd,
    gatewayCpuShareOfACore: gatewayCpuShare,
    soakCpuShareOfACore: soakCpuShare,
    soakEventLoopDelayMs: { p99: soakLoopDelay.percentile(99) / 1e6, max: soakLoopDelay.max / 1e6 },
  },
  healthz: { probes: healthz.length, failures: healthzFailures, p50Ms: percentile(healthz, 50), p99Ms: percentile(healthz, 99), maxMs: healthz.at(-1) },
  live: { ...liveFigures, ...live.tally, simulatorRestarts: restarts },
  logLines: { byLevel: logLevels, warnAndAbove: Object.fromEntries(Object.entries(logMessages).sort((a, b) => b[1] - a[1]).slice(0, 25)) },
  gatewayExitCode: exitCode,
  examples: tally.examples,
  broken,
};
const path = `${ensureDir(RESULTS)}/soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);

const mb = (n: number | undefined) => (n === undefined ? '-' : `${n.toFixed(0)} MB`);
const lines = [
  `answers: ${answered} (${Object.entries(tally.statuses).map(([s, n]) => `${s}: ${n}`).join(', ')}); unanswered ${tally.unanswered}, abandoned streams ${tally.abandoned}, not sent (too many in flight) ${tally.skipped}`,
  `error codes: ${Object.entries(tally.codes).sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`).join(', ') || 'none'}`,
  `INTERNAL_SERVER_ERROR: ${report.internalServerErrors}, errors without a code: ${report.codeless}`,
  `RSS: start ${mb(rssTrend.start)}, peak ${mb(rssTrend.peak)}, end of load ${mb(rssTrend.end)}, after the drain ${mb(rssAfterDrain)};` +
    ` second half ${rssTrend.slopePerMinute.toFixed(2)} ± ${rssTrend.slopeErrorPerMinute.toFixed(2)} MB/min` +
    (rssTrend.secondHalfMs < DEFAULT_LIMITS.memoryJudgedFromMs ? ` (not judged: a second half under ${DEFAULT_LIMITS.memoryJudgedFromMs / 60_000} min)` : ''),
  heapTrend ? `heap used: start ${mb(heapTrend.start)}, peak ${mb(heapTrend.peak)}, end ${mb(heapTrend.end)}, second half ${heapTrend.slopePerMinute.toFixed(2)} MB/min` : 'heap used: not sampled',
  `/healthz: p50 ${report.healthz.p50Ms.toFixed(1)} ms, p99 ${report.healthz.p99Ms.toFixed(1)} ms, ${healthzFailures} failed of ${healthz.length + healthzFailures}`,
  `live: ${liveFigures.subscribers} subscribers, ${liveFigures.inserted} records inserted, ${liveFigures.delivered} delivered, ${liveFigures.duplicated} duplicated, ${liveFigures.missing} missing, ${liveFigures.foreign} outside the filter` +
    ` (${live.tally.resumes} resumes, ${live.tally.abruptEnds} abrupt ends, ${liveFigures.lostUpstream} lost with a simulator restart); stream endings: ${JSON.stringify(live.tally.endings)}`,
  `log lines: ${JSON.stringify(logLevels)}`,
  `machine: ${cpus().length} cores, load average ${loadAtStart.toFixed(1)} at the start and ${loadAtEnd.toFixed(1)} at the end; the gateway used ${(gatewayCpuShare * 100).toFixed(0)} % of a core under load, the soak itself ${(soakCpuShare * 100).toFixed(0)} %, its event loop delayed ${(soakLoopDelay.percentile(99) / 1e6).toFixed(0)} ms at p99, ${(soakLoopDelay.max / 1e6).toFixed(0)} ms at most`,
  `by phase, p99 / max (s), as the client timed them | as the gateway logged them:`,
  ...PHASES.map(({ name }) => {
    const seconds = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : (n / 1000).toFixed(1));
    const client = requestsByPhase[name];
    const own = gatewayByPhase[name];
    return `  ${name.padEnd(38)} ${seconds(client?.p99)} / ${seconds(client?.max)} | ${seconds(own?.p99)} / ${seconds(own?.max)}`;
  }),
  `slowest requests, client s / gateway s: ${slowest
    .slice(0, 5)
    .map((slow) => `${slow.kind} ${(slow.ms / 1000).toFixed(1)} / ${slow.gatewayMs === undefined ? '-' : (slow.gatewayMs / 1000).toFixed(1)}`)
    .join(', ')}`,
  `slowest in the gateway, gateway s: ${slowestInGateway
    .slice(0, 5)
    .map((slow) => `${slow.kind ?? '?'} (${slow.phase ?? '?'}) ${(slow.gatewayMs / 1000).toFixed(1)}`)
    .join(', ')}`,
  `longest request: ${(tally.longestMs / 1000).toFixed(1)} s (${tally.longestKind}); deadline ${REQUEST_TIMEOUT_MS / 1000} s`,
  `figures: ${path}`,
  broken.length === 0 ? 'PASS: every promise kept' : `FAIL:\n  ${broken.join('\n  ')}`,
];
process.stdout.write(`\n${lines.join('\n')}\n`);
process.exit(broken.length === 0 ? 0 : 1);
