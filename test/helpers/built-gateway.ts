/**
 * The production build, made once per test run (vitest globalSetup) into a temporary directory:
 * the process tests that are not about `npm start` itself run it, which starts in a fraction of the
 * CPU time tsx needs to load src/ module by module.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import type { RunOptions } from './process.js';

declare module 'vitest' {
  export interface ProvidedContext {
    builtGatewayDir: string;
  }
}

/** One build for every project of the run: vitest calls a global set-up once per project. */
const shared = globalThis as typeof globalThis & { builtGateway?: { dir: Promise<string>; users: number } };

async function build(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-under-test-'));
  const checkout = new URL('../..', import.meta.url).pathname;
  await promisify(execFile)(process.execPath, [join(checkout, 'build.mjs'), `--outdir=${join(dir, 'dist')}`], { cwd: checkout });
  return dir;
}

export default async function buildOnce(project: TestProject): Promise<() => Promise<void>> {
  shared.builtGateway ??= { dir: build(), users: 0 };
  const built = shared.builtGateway;
  built.users++;
  project.provide('builtGatewayDir', await built.dir);
  return async () => {
    if (--built.users > 0) return;
    shared.builtGateway = undefined;
    await rm(await built.dir, { recursive: true, force: true });
  };
}

/** `runGateway`'s options for the built entry point, dist/index.js. */
export function builtGateway(): RunOptions {
  const dir = inject('builtGatewayDir');
  return { args: [join(dir, 'dist/index.js')], cwd: dir };
}
