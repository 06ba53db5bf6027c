/** Runs the real entry point as a child process: src/main.ts as `npm start` does, or a built one. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const EXIT_WITH_PARENT = fileURLToPath(new URL('../../bench/exit-with-parent.mjs', import.meta.url));

export interface GatewayProcess {
  readonly child: ChildProcess;
  /** Resolves with the listening URL once the ready line is logged. */
  readonly ready: Promise<string>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code. */
  exited(): Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface RunOptions {
  /** Node's arguments: the flags and the entry point (default: src/main.ts through tsx). */
  readonly args?: readonly string[];
  /** Default: the checkout. */
  readonly cwd?: string | URL;
}

export function runGateway(env: Record<string, string>, options: RunOptions = {}): GatewayProcess {
  const { args = ['--import', 'tsx', 'src/main.ts'], cwd = new URL('../..', import.meta.url) } = options;
  // It stops itself if this test process dies before stopping it.
  const child = spawn(process.execPath, ['--import', EXIT_WITH_PARENT, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Gateway ready at (http:\/\/[^/"]+)\/graphql/.exec(out);
      if (match) resolve(match[1]!);
    });
    void exit.then((code) => reject(new Error(`gateway exited with ${code} before it was ready:\n${err}`)));
  });
  ready.catch(() => {});
  return {
    child,
    ready,
    stdout: () => out,
    stderr: () => err,
    exited: () => exit,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exit;
    },
  };
}

/** Runs a TypeScript script in a node process of its own (under tsx, with `nodeArgs`) to its end. */
export async function runScript(
  nodeArgs: readonly string[],
  script: string,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (data: Buffer) => (stdout += data));
  child.stderr!.on('data', (data: Buffer) => (stderr += data));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/**
 * The real entry point in upstream mode over a fake identity service listening on 127.0.0.1, its
 * heap capped at `heapMb`, anonymous callers let in and the audit cache off (each page is read).
 */
export function runGatewayOverIdentity(identity: Server, heapMb: number, env: Record<string, string> = {}): GatewayProcess {
  return runGateway({
    NODE_OPTIONS: `--max-old-space-size=${heapMb}`,
    IDENTITY_BASE_URL: `http://127.0.0.1:${(identity.address() as AddressInfo).port}`,
    IDENTITY_CLIENT_ID: 'gateway',
    IDENTITY_CLIENT_SECRET: 'secret',
    GATEWAY_ALLOW_ANONYMOUS: 'true',
    AUDIT_CACHE_MAX_BYTES: '0',
    LOG_LEVEL: 'info', // the ready line
    ...env,
  });
}
