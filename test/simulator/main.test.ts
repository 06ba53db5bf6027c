import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_USER } from '../../simulator/index.js';
import { basic, http, tokenRequest } from '../helpers/simulator-client.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
let child: ChildProcess | undefined;

afterAll(() => {
  // Only if a test failed before stopping it; by its own pid.
  if (child && child.exitCode === null) child.kill('SIGKILL');
});

/** Resolves with the first stdout line. */
function firstLine(proc: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline >= 0) resolve(buffered.slice(0, newline));
    });
    proc.once('exit', (code) => reject(new Error(`exited early with ${String(code)}`)));
  });
}

describe('stand-alone simulator (main.ts)', () => {
  it('prints its URL and the demo credentials, serves, and exits 0 on SIGTERM', { timeout: 15_000 }, async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'simulator/main.ts'], {
      cwd: root,
      env: { ...process.env, SIMULATOR_PORT: '0', SIMULATOR_HOST: '127.0.0.1', SIMULATOR_SEED: '5' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const line = await firstLine(child);
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(line)?.[0];
    expect(url).toBeDefined();
    for (const secret of [DEMO_CLIENT.id, DEMO_CLIENT.secret, DEMO_USER.username, DEMO_USER.password]) expect(line).toContain(secret);

    const sim = { url: url as string } as Parameters<typeof tokenRequest>[0];
    const token = await tokenRequest(sim, { grant_type: 'client_credentials' }, { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) });
    expect(token.status).toBe(200);
    expect((await http(`${url}/__simulator/counters`)).json).toMatchObject({ token: 1 });

    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });
});
