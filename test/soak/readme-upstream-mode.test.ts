/**
 * The README's "Upstream mode, locally" recipe, taken from the README itself: the simulator as
 * `npm run simulator` starts it (on a free port instead of 4010), beside the gateway with exactly
 * the variables of the recipe (that port put in for localhost:4010), then the recipe's curl
 * request, with its key, answered with data from both upstreams.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runGateway, type GatewayProcess } from '../helpers/process.js';
import { exampleFiles } from '../clients/readme-blocks.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXIT_WITH_PARENT = fileURLToPath(new URL('../../bench/exit-with-parent.mjs', import.meta.url));
const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** Shell words: bare, or in single quotes (taken literally, as a shell does). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2]!);
}

/** The recipe's commands: continuation lines joined, comments dropped. */
function recipeCommands(): string[] {
  const recipe = exampleFiles().get('upstream-mode.sh');
  if (!recipe) throw new Error('README.md has no upstream-mode.sh block');
  return recipe
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

/** `node --import tsx <file>` for an npm script that is `tsx <file>`. */
function tsxEntry(script: string): string {
  const match = /^tsx (\S+)$/.exec(scripts[script] ?? '');
  if (!match) throw new Error(`npm run ${script} is not "tsx <file>": ${scripts[script]}`);
  return match[1]!;
}

let simulator: ChildProcess | undefined;
let gateway: GatewayProcess | undefined;
afterAll(async () => {
  await gateway?.stop();
  if (simulator && simulator.exitCode === null && simulator.signalCode === null) {
    simulator.kill('SIGTERM');
    await once(simulator, 'exit');
  }
});

/** A port free a moment ago, so the simulator and the gateway can start side by side. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startSimulator(port: number): Promise<{ url: string; printed: string }> {
  simulator = spawn(process.execPath, ['--import', EXIT_WITH_PARENT, '--import', 'tsx', tsxEntry('simulator')], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', SIMULATOR_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  const child = simulator;
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(printed)?.[1];
      if (url && printed.includes('\n')) resolve({ url, printed });
    });
    child.once('exit', (code) => reject(new Error(`the simulator exited with ${code}: ${printed}`)));
  });
}

describe('README: upstream mode, locally', { timeout: 60_000 }, () => {
  it('the recipe runs: the simulator, the gateway with the printed variables, a query with the key', async () => {
    const [simulatorCommand, gatewayCommand, curlCommand, ...rest] = recipeCommands();
    expect(rest).toEqual([]);
    expect(simulatorCommand).toBe('npm run simulator');

    const gatewayWords = shellWords(gatewayCommand!);
    const assignments = gatewayWords.filter((word) => /^[A-Z_]+=/.test(word));
    expect(gatewayWords.slice(assignments.length)).toEqual(['npm', 'start']);
    expect(tsxEntry('start')).toBe('src/main.ts');
    const env = Object.fromEntries(assignments.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));

    const port = await freePort();
    for (const name of ['IDENTITY_BASE_URL', 'CONTENT_LIBRARY_URL']) {
      expect(env[name]).toBe('http://localhost:4010');
      env[name] = `http://127.0.0.1:${port}`;
    }
    const started = startSimulator(port);
    gateway = runGateway({ ...env, LOG_LEVEL: 'info' });
    const [sim, origin] = await Promise.all([started, gateway.ready]);
    // The credentials are those the simulator prints when it starts.
    expect(sim.url).toBe(`http://127.0.0.1:${port}`);
    expect(sim.printed).toContain(`identity client ${env['IDENTITY_CLIENT_ID']} / ${env['IDENTITY_CLIENT_SECRET']}`);
    expect(sim.printed).toContain(`content library user ${env['CONTENT_LIBRARY_USERNAME']} / ${env['CONTENT_LIBRARY_PASSWORD']}`);
    expect(gateway.stdout()).toContain('"mode":"upstream"');

    const curl = shellWords(curlCommand!);
    expect(curl.slice(0, 3)).toEqual(['curl', '-s', 'http://localhost:4000/graphql']);
    const headers: Record<string, string> = {};
    let body = '';
    for (let i = 3; i < curl.length; i += 2) {
      if (curl[i] === '-H') {
        const [name, ...value] = curl[i + 1]!.split(':');
        headers[name!.trim()] = value.join(':').trim();
      } else if (curl[i] === '-d') body = curl[i + 1]!;
      else throw new Error(`unexpected curl argument ${curl[i]}`);
    }
    expect(headers['x-api-key']).toBe(env['GATEWAY_API_KEYS']);

    const answer = await fetch(`${origin}/graphql`, { method: 'POST', headers, body });
    const result = (await answer.json()) as any;
    expect(answer.status).toBe(200);
    expect(result.errors).toBeUndefined();
    expect(result.data.auditEvents.totalCount).toBeGreaterThan(0);
    expect(result.data.updateSessionFiles.length).toBeGreaterThan(0);

    // The key is what lets the request in: this is upstream mode.
    const { 'x-api-key': _key, ...keyless } = headers;
    const refused = await fetch(`${origin}/graphql`, { method: 'POST', headers: keyless, body });
    expect(refused.status).toBe(401);
  });
});
