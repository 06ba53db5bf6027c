/**
 * Where a process spent its CPU: the top functions by self time of a V8 .cpuprofile (as written by
 * `node --cpu-prof`), with url:line, and self time by package. Compiled gateway files are mapped
 * back to their src/*.ts line through their .js.map.
 *
 *   npx tsx bench/profile-top.ts bench/results/profiles/<file>.cpuprofile [count]
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { originalPosition } from './sourcemap.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SPECIAL = new Set(['(garbage collector)', '(program)', '(idle)', '(root)']);

/** Self time in µs per profile node: each sample lasts until the next one. */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const times = new Map<number, number>();
  const { samples, timeDeltas } = profile;
  let timestamp = profile.startTime;
  const stamps = samples.map((_, i) => (timestamp += timeDeltas[i] ?? 0));
  for (let i = 0; i < samples.length; i++) {
    const duration = (i + 1 < samples.length ? stamps[i + 1]! : profile.endTime) - stamps[i]!;
    times.set(samples[i]!, (times.get(samples[i]!) ?? 0) + Math.max(0, duration));
  }
  return times;
}

/** Where a frame's code was written: its source file and line when a source map says so. */
function sourceOf(frame: CallFrame): { source: string; line: number } {
  const path = fileURLToPath(frame.url);
  const mapped = existsSync(`${path}.map`) ? originalPosition(`${path}.map`, frame.lineNumber, frame.columnNumber) : undefined;
  return mapped ?? { source: path, line: frame.lineNumber + 1 };
}

/** A short location: src/*.ts:line when a source map says so, else the path under the project. */
function location(frame: CallFrame): string {
  if (!frame.url) return '';
  if (!frame.url.startsWith('file://')) return `${frame.url}:${frame.lineNumber + 1}`;
  const where = sourceOf(frame);
  return `${where.source.replace(ROOT, '')}:${where.line}`;
}

function category(frame: CallFrame): string {
  if (SPECIAL.has(frame.functionName)) return frame.functionName;
  if (!frame.url) return '(native / V8 builtins)';
  if (frame.url.startsWith('node:')) return '(node internals)';
  // A bundle holds packages and src/ alike: its source map tells them apart.
  const source = frame.url.startsWith('file://') ? sourceOf(frame).source : frame.url;
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source);
  if (pkg) return pkg[1]!;
  // The gateway's src/ and the reference server's file: one category, so two profiles line up.
  if (/\/bench\/results\/(reference-)?build\/|\/src\//.test(source)) return '(own code)';
  return source;
}

/** Self time in µs by package / category, idle left out. */
export function timeByCategory(file: string): Map<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const times = selfTimes(profile);
  const byCategory = new Map<string, number>();
  for (const node of profile.nodes) {
    const cat = category(node.callFrame);
    if (cat !== '(idle)') byCategory.set(cat, (byCategory.get(cat) ?? 0) + (times.get(node.id) ?? 0));
  }
  return byCategory;
}

/** A profile of one server under a load, and the requests it answered in that time. */
export interface ProfiledRun {
  readonly name: string;
  readonly file: string;
  readonly requests: number;
}

/**
 * Two profiles side by side in µs per request, by package / category, largest difference first:
 * where one server spends what the other does not.
 */
export function compareProfiles(a: ProfiledRun, b: ProfiledRun): string {
  const [timesA, timesB] = [timeByCategory(a.file), timeByCategory(b.file)];
  const perRequest = (times: Map<string, number>, requests: number, cat?: string) =>
    (cat === undefined ? [...times.values()].reduce((sum, us) => sum + us, 0) : (times.get(cat) ?? 0)) / requests;
  const rows = [...new Set([...timesA.keys(), ...timesB.keys()])]
    .map((cat) => ({ cat, a: perRequest(timesA, a.requests, cat), b: perRequest(timesB, b.requests, cat) }))
    .filter((row) => Math.abs(row.a - row.b) >= 1)
    .sort((x, y) => y.a - y.b - (x.a - x.b));
  rows.unshift({ cat: '(all)', a: perRequest(timesA, a.requests), b: perRequest(timesB, b.requests) });
  const f = (us: number) => us.toFixed(1).padStart(10);
  return [
    'busy µs per request by package / category (profiler on, start-up included)',
    `${a.name.padStart(10)}  ${b.name.padStart(10)}  ${'diff'.padStart(10)}  category`,
    ...rows.map((row) => `${f(row.a)}  ${f(row.b)}  ${f(row.a - row.b)}  ${row.cat}`),
  ].join('\n');
}

export function summarizeProfile(file: string, count = 25): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const times = selfTimes(profile);
  const total = [...times.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, { frame: CallFrame; us: number }>();
  const byCategory = new Map<string, number>();
  for (const node of profile.nodes) {
    const us = times.get(node.id) ?? 0;
    if (us === 0) continue;
    const f = node.callFrame;
    const key = `${f.functionName}|${f.url}|${f.lineNumber}|${f.columnNumber}`;
    const entry = byFunction.get(key) ?? { frame: f, us: 0 };
    entry.us += us;
    byFunction.set(key, entry);
    const cat = category(f);
    byCategory.set(cat, (byCategory.get(cat) ?? 0) + us);
  }
  const idle = byCategory.get('(idle)') ?? 0;
  const busy = total - idle;
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1)}%`.padStart(6);
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
  const lines = [
    `profile: ${(total / 1e6).toFixed(1)} s, of which idle ${(idle / 1e6).toFixed(1)} s; percentages are of the ${(busy / 1e6).toFixed(1)} s busy`,
    '',
    `top ${count} functions by self time`,
    `${'self ms'.padStart(7)}  ${'%'.padStart(6)}  function  (location)`,
  ];
  const top = [...byFunction.values()].filter((e) => e.frame.functionName !== '(idle)').sort((a, b) => b.us - a.us).slice(0, count);
  for (const { frame, us } of top) {
    const where = location(frame);
    lines.push(`${ms(us)}  ${pct(us)}  ${frame.functionName || '(anonymous)'}${where ? `  ${where}` : ''}`);
  }
  lines.push('', 'self time by package / category');
  for (const [cat, us] of [...byCategory].filter(([c]) => c !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, 15)) {
    lines.push(`${ms(us)}  ${pct(us)}  ${cat}`);
  }
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, count] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: npx tsx bench/profile-top.ts <file.cpuprofile> [count]\n');
    process.exit(2);
  }
  process.stdout.write(`${summarizeProfile(file, count ? Number(count) : 25)}\n`);
}
