/**
 * The production build, made once per test run into a temporary directory, by the first test that
 * asks for it: the process tests that are not about `npm start` itself run it, which starts in a
 * fraction of the CPU time tsx needs to load src/ module by module. As vitest's global set-up, this
 * file removes the build when the run ends.
 */
import { execFile } from 'node:child_process';
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { RunOptions } from './process.js';

const BUILD_WAIT_MS = 180_000;

/** This run's build: one per vitest process, which its workers have as parent. */
const buildDirOf = (vitestPid: number) => join(tmpdir(), `gateway-under-test-${vitestPid}`);

/** Global set-up: no build of an earlier run under the same process id is taken for this run's. */
export default async function removeBuildAtEnd(): Promise<() => Promise<void>> {
  const remove = () => rm(buildDirOf(process.pid), { recursive: true, force: true });
  await remove();
  return remove;
}

const exists = (path: string) => access(path).then(() => true, () => false);

/** Builds into `dir`, or waits for the worker that does: whoever creates the directory builds. */
async function buildShared(dir: string): Promise<void> {
  const [done, failed] = [join(dir, 'built'), join(dir, 'failed')];
  const builder = await mkdir(dir).then(() => true, (error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST') return false;
    throw error;
  });
  if (builder) {
    const checkout = new URL('../..', import.meta.url).pathname;
    try {
      await promisify(execFile)(process.execPath, [join(checkout, 'build.mjs'), `--outdir=${join(dir, 'dist')}`], { cwd: checkout });
    } catch (error) {
      await writeFile(failed, String(error));
      throw error;
    }
    await writeFile(done, '');
    return;
  }
  const deadline = Date.now() + BUILD_WAIT_MS;
  while (!(await exists(done))) {
    if (await exists(failed)) throw new Error(`the build failed in another worker: see ${failed}`);
    if (Date.now() > deadline) throw new Error(`no build in ${dir} after ${BUILD_WAIT_MS} ms`);
    await sleep(100);
  }
}

let built: Promise<string> | undefined;

/** `runGateway`'s options for the built entry point, dist/index.js. */
export async function builtGateway(): Promise<RunOptions> {
  built ??= (async () => {
    const dir = buildDirOf(process.ppid);
    await buildShared(dir);
    return dir;
  })();
  const dir = await built;
  return { args: [join(dir, 'dist/index.js')], cwd: dir };
}
