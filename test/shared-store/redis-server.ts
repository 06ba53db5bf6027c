/**
 * A redis-server of a suite's own on a free 127.0.0.1 port, nothing persisted: started before the
 * suite, killed after it (and killed and started again by fault tests). Without `redis-server`
 * on the machine the suite is skipped with one line saying so, except under CI=true where its
 * absence fails the run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

const START_WAIT_MS = 5000;
const EXIT_WAIT_MS = 3000;

export interface RedisServerOptions {
  /** An ACL user the gateway logs in as; the default user is then disabled. */
  readonly user?: { readonly name: string; readonly password: string };
}

export interface RedisServer {
  readonly port: number;
  /** redis://, with the ACL user when there is one. */
  readonly url: string;
  /** Kills the server at once (SIGKILL): a crash, as the gateway sees it. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** Stops (SIGSTOP) and continues (SIGCONT) the process: a Redis that stalls while connected. */
  pause(): void;
  resume(): void;
}

function missingReason(): string | undefined {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8', timeout: 5000 });
  if (probe.error) return `redis-server is not installed (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message})`;
  return probe.status === 0 ? undefined : `redis-server --version exited with ${probe.status}`;
}

/** Whether to skip a Redis suite: prints why once; throws under CI=true, where Redis must be there. */
export function skipWithoutRedis(suite: string): boolean {
  const reason = missingReason();
  if (!reason) return false;
  if (process.env.CI === 'true') throw new Error(`${suite}: ${reason}, and CI=true requires it (.ci/run installs it)`);
  console.log(`Redis suite "${suite}" skipped: ${reason}.`);
  return true;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function launch(port: number, options: RedisServerOptions): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  if (options.user) args.push('--user', options.user.name, 'on', `>${options.user.password}`, '~*', '&*', '+@all', '--user', 'default', 'off');
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not get ready in ${START_WAIT_MS} ms:\n${output}`));
    }, START_WAIT_MS);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('Ready to accept connections')) return;
      clearTimeout(timer);
      child.stdout!.off('data', read);
      child.stdout!.resume();
      child.stderr!.resume();
      resolve(child);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}:\n${output}`));
    });
  });
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || (child.signalCode !== null && child.signalCode !== 'SIGSTOP')) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, EXIT_WAIT_MS))]);
}

/** A server for the tests of one suite (call inside a describe). */
export function redisServerForSuite(options: RedisServerOptions = {}): RedisServer {
  let child: ChildProcess | undefined;
  let port = 0;
  const server: RedisServer = {
    get port() {
      return port;
    },
    get url() {
      const user = options.user ? `${encodeURIComponent(options.user.name)}:${encodeURIComponent(options.user.password)}@` : '';
      return `redis://${user}127.0.0.1:${port}`;
    },
    kill: () => stop(child),
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    async start() {
      await stop(child);
      child = await launch(port, options);
    },
  };
  beforeAll(async () => {
    port = await freePort();
    child = await launch(port, options);
  });
  afterAll(() => stop(child));
  return server;
}
