/**
 * The bench's child processes: the compiled gateway, the reference server, the simulator. Every
 * child is registered and killed when the bench exits, however it exits (normal end, error, Ctrl-C,
 * SIGTERM); should the bench be SIGKILLed, the simulator sees its stdin close and the gateway and
 * the reference server their parent change (exit-with-parent.mjs), and all stop on their own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { DEMO_CLIENT, DEMO_USER } from '../simulator/index.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const RESULTS = `${ROOT}bench/results`;
/** The gateway compiled by tsc from src/, as `npm run build` does, but kept inside bench/results/. */
const BUILD_DIR = `${RESULTS}/build`;
/** The reference server (bench/reference-server.ts), compiled the same way. */
const REFERENCE_BUILD_DIR = `${RESULTS}/reference-build`;

const children = new Set<ChildProcess>();
const killAll = () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
};
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping every child process\n`);
    killAll();
    process.exit(130);
  });
}

export interface Child {
  readonly name: string;
  readonly pid: number;
  /** The last 64 KB of stdout + stderr, for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, onLine?: (line: string) => void): Child & { readonly exit: Promise<number | null>; readonly process: ChildProcess } {
  // stdin is a pipe the child may watch: it closes when the bench dies, even by SIGKILL.
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  let partial = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-65_536);
  };
  // Always drained: a full pipe would block the child's logger.
  child.stdout!.on('data', (chunk: Buffer) => {
    keep(chunk);
    if (!onLine) return;
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) onLine(line);
  });
  child.stderr!.on('data', keep);
  const exit = once(child, 'exit').then(([code]) => {
    children.delete(child);
    return code as number | null;
  });
  return {
    name,
    pid: child.pid!,
    process: child,
    exit,
    output: () => output,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exit;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exit;
      clearTimeout(timer);
      return code;
    },
  };
}

export interface SimulatorChild extends Child {
  readonly url: string;
  /** Date.now() in the simulator just before it generated its seed data. */
  readonly startedAt: number;
}

export async function startSimulatorProcess(seed: number, port = 0): Promise<SimulatorChild> {
  let ready: (value: { url: string; startedAt: number }) => void;
  const announced = new Promise<{ url: string; startedAt: number }>((resolve) => (ready = resolve));
  const child = startChild(
    'simulator',
    ['--import', 'tsx', 'bench/simulator-process.ts'],
    { PATH: process.env.PATH ?? '', BENCH_SIMULATOR_SEED: String(seed), BENCH_SIMULATOR_PORT: String(port), NODE_ENV: 'production' },
    (line) => {
      if (line.startsWith('{')) ready(JSON.parse(line) as { url: string; startedAt: number });
    },
  );
  const info = await Promise.race([
    announced,
    child.exit.then((code) => Promise.reject(new Error(`simulator exited with ${code}:\n${child.output()}`))),
  ]);
  return { ...child, ...info };
}

/** Runs node with `args` from the checkout to its end: its exit code and output. */
async function runNode(args: readonly string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  children.delete(child);
  return { code, out: out.trim() };
}

/** Runs tsc on a project into `outDir`; returns its type errors, if any. It emits despite them: only a missing `entry` is fatal. */
async function compile(project: string, outDir: string, entry: string): Promise<string | undefined> {
  rmSync(outDir, { recursive: true, force: true });
  const { code, out } = await runNode([`${ROOT}node_modules/typescript/bin/tsc`, '-p', project, '--outDir', outDir]);
  if (!existsSync(`${outDir}/${entry}`)) throw new Error(`tsc produced no ${outDir}/${entry}:\n${out}`);
  return code === 0 ? undefined : out;
}

/**
 * Builds the gateway as `npm run build` does (build.mjs: src/ bundled by esbuild) into
 * bench/results/build, or the tree under `root` into `outDir`. Types are `npm run typecheck`'s
 * business, not the build's.
 */
export async function buildGateway(root = ROOT, outDir = BUILD_DIR, buildScript = `${ROOT}build.mjs`): Promise<void> {
  const { code, out } = await runNode([buildScript, `--root=${root}`, `--outdir=${outDir}`]);
  if (code !== 0 || !existsSync(`${outDir}/index.js`)) throw new Error(`the build wrote no ${outDir}/index.js:\n${out}`);
}

/** Compiles the reference server (bench/tsconfig.reference.json) into bench/results/reference-build. */
export function buildReference(): Promise<string | undefined> {
  return compile(`${ROOT}bench/tsconfig.reference.json`, REFERENCE_BUILD_DIR, 'reference-process.js');
}

export interface GatewayOptions {
  readonly simulatorUrl: string;
  /** Extra variables (AUDIT_CACHE_MAX_BYTES ...). */
  readonly env?: Record<string, string>;
  /** Run src/main.ts through tsx instead of the compiled build. */
  readonly tsx?: boolean;
  /** Extra node flags (--cpu-prof ...). */
  readonly nodeArgs?: readonly string[];
  /** Another compiled entry point (an earlier commit's build, for --ab). */
  readonly entry?: string;
  /** Each line the gateway writes to stdout (its JSON log lines). */
  readonly onLine?: (line: string) => void;
}

export interface GatewayChild extends Child {
  readonly url: string;
}

export const API_KEY = 'bench-key';

const productionCommand = (): string[] =>
  ((JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts['start:prod'] ?? '').split(/\s+/);

/** The node flags of `npm run start:prod` (and the container), so the bench measures what runs in production. */
function productionNodeFlags(): string[] {
  return productionCommand().filter((word) => word.startsWith('--'));
}

/** The variables `npm run start:prod` sets before `node` (the allocator's settings; the container sets the same). */
function productionEnvironment(): Record<string, string> {
  const assignments = productionCommand().filter((word) => /^[A-Z_][A-Z0-9_]*=/.test(word));
  return Object.fromEntries(assignments.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The real entry point in upstream mode against the simulator, with the command line and variables
 * of `npm run start:prod` (unless through tsx), logging at the default level as shipped: one access
 * line per request. Readiness is polled on /readyz.
 */
export async function startGateway(options: GatewayOptions): Promise<GatewayChild> {
  const port = await freePort();
  const entry = options.tsx ? ['--import', 'tsx', 'src/main.ts'] : [...productionNodeFlags(), options.entry ?? `${BUILD_DIR}/index.js`];
  const watch = ['--import', './bench/exit-with-parent.mjs'];
  const child = startChild('gateway', [...watch, ...(options.nodeArgs ?? []), ...entry], {
    ...(options.tsx ? {} : productionEnvironment()),
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    IDENTITY_BASE_URL: options.simulatorUrl,
    IDENTITY_CLIENT_ID: DEMO_CLIENT.id,
    IDENTITY_CLIENT_SECRET: DEMO_CLIENT.secret,
    CONTENT_LIBRARY_URL: options.simulatorUrl,
    CONTENT_LIBRARY_USERNAME: DEMO_USER.username,
    CONTENT_LIBRARY_PASSWORD: DEMO_USER.password,
    GATEWAY_API_KEYS: API_KEY,
    LOG_LEVEL: 'info',
    SHUTDOWN_GRACE_MS: '5000',
    ...options.env,
  }, options.onLine);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.process.exitCode !== null) throw new Error(`gateway exited with ${child.process.exitCode}:\n${child.output()}`);
    if (Date.now() > deadline) throw new Error(`gateway not ready within 60 s:\n${child.output()}`);
    const ok = await request(`${url}/readyz`).then(
      async (res) => (await res.body.dump(), res.statusCode === 200),
      () => false,
    );
    if (ok) return { ...child, url };
    await sleep(100);
  }
}

export interface ReferenceChild extends Child {
  readonly url: string;
}

/**
 * The reference server (bare Yoga + jit, bench/reference-server.ts) against the simulator, started
 * like the gateway: compiled, with the node flags and variables of `npm run start:prod` (or through tsx).
 */
export async function startReference(options: Pick<GatewayOptions, 'simulatorUrl' | 'tsx' | 'nodeArgs'>): Promise<ReferenceChild> {
  let ready: (url: string) => void;
  const announced = new Promise<string>((resolve) => (ready = resolve));
  const entry = options.tsx ? ['--import', 'tsx', 'bench/reference-process.ts'] : [...productionNodeFlags(), `${REFERENCE_BUILD_DIR}/reference-process.js`];
  const child = startChild(
    'reference',
    ['--import', './bench/exit-with-parent.mjs', ...(options.nodeArgs ?? []), ...entry],
    {
      ...(options.tsx ? {} : productionEnvironment()),
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      IDENTITY_BASE_URL: options.simulatorUrl,
      IDENTITY_CLIENT_ID: DEMO_CLIENT.id,
      IDENTITY_CLIENT_SECRET: DEMO_CLIENT.secret,
    },
    (line) => {
      if (line.startsWith('{')) ready((JSON.parse(line) as { url: string }).url);
    },
  );
  const url = await Promise.race([
    announced,
    child.exit.then((code) => Promise.reject(new Error(`reference server exited with ${code}:\n${child.output()}`))),
  ]);
  return { ...child, url };
}

/** kB fields of /proc/<pid>/status, in MB; undefined off Linux. */
export function memoryOf(pid: number): { rssMB: number; peakMB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
    return { rssMB: kb('VmRSS') / 1024, peakMB: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every common Linux). */
const CLOCK_TICKS = 100;

/** utime + stime of a process in ms, from /proc/<pid>/stat; undefined off Linux or once it is gone. */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields from the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Resets VmHWM to the current RSS (Linux `clear_refs` 5), so the next peak is the next phase's. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export function ensureDir(path: string): string {
  mkdirSync(path, { recursive: true });
  return path;
}
