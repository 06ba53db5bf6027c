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

/** A short location: src/*.ts:line when a source map says so, else the path under the project. */
function location(frame: CallFrame): string {
  if (!frame.url) return '';
  if (!frame.url.startsWith('file://')) return `${frame.url}:${frame.lineNumber + 1}`;
  const path = fileURLToPath(frame.url);
  const mapped = existsSync(`${path}.map`) ? originalPosition(`${path}.map`, frame.lineNumber, frame.columnNumber) : undefined;
  const where = mapped ?? { source: path, line: frame.lineNumber + 1 };
  return `${where.source.replace(ROOT, '')}:${where.line}`;
}

function category(frame: CallFrame): string {
  if (SPECIAL.has(frame.functionName)) return frame.functionName;
  if (!frame.url) return '(native / V8 builtins)';
  if (frame.url.startsWith('node:')) return '(node internals)';
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(frame.url);
  if (pkg) return pkg[1]!;
  if (frame.url.includes('/bench/results/build/') || frame.url.includes('/src/')) return '(gateway src/)';
  return frame.url;
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
