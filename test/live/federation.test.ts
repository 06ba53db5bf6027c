/**
 * The live subscription through a federation router: Hive Gateway serves a supergraph composed
 * from this gateway's subgraph SDL and subscribes to it over SSE.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { subgraphSdl } from '../../src/schema/federation-sdl.js';
import { LIVE_QUERY, Received, registered, sleep, sseClient, startLiveServer, type LivePayload, type LiveServer } from './live-server.js';

let server: LiveServer;
let router: ChildProcess | undefined;
let routerUrl: string;
let dir: string | undefined;
const accepts: string[] = [];

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  server = await startLiveServer({
    onRequest: (request) => void accepts.push(String(request.headers.accept)),
  });
  const composed = composeServices([{ name: 'identity', typeDefs: parse(subgraphSdl()), url: server.url }]);
  if (compositionHasErrors(composed)) throw new Error(composed.errors.map((e) => e.message).join('\n'));
  dir = mkdtempSync(join(tmpdir(), 'live-federation-'));
  const supergraph = join(dir, 'supergraph.graphql');
  writeFileSync(supergraph, composed.supergraphSdl);
  // The router passes the caller's key on to the subgraph, which authenticates it as usual.
  const config = join(dir, 'gateway.config.mjs');
  writeFileSync(
    config,
    `export const gatewayConfig = {
      propagateHeaders: { fromClientToSubgraphs: ({ request }) => ({ 'x-api-key': request.headers.get('x-api-key') ?? '' }) },
    };`,
  );
  const port = await freePort();
  router = spawn(
    process.execPath,
    [new URL('../../node_modules/.bin/hive-gateway', import.meta.url).pathname, 'supergraph', supergraph, '--port', String(port), '--host', '127.0.0.1', '--disable-websockets', '-c', config],
    { cwd: dir, env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  router.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  router.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  routerUrl = `http://127.0.0.1:${port}/graphql`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${port}/readiness`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline || router.exitCode !== null) throw new Error(`hive-gateway did not start:\n${output}`);
    await sleep(200);
  }
}, 40_000);

afterAll(async () => {
  if (router && router.exitCode === null) {
    router.kill('SIGTERM');
    await once(router, 'exit');
  }
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('delivers live audit records through Hive Gateway, which subscribes to the subgraph over SSE', async () => {
  const iterator = sseClient(routerUrl).iterate({ query: LIVE_QUERY, variables: { filter: { objectType: 'Group' } } });
  const received = await registered(server, () => new Received(iterator as AsyncIterableIterator<LivePayload>));
  await sleep(50);
  const inserted = server.sim.control.insertEvents(3, { objectType: 'Group' }).map((r) => r.uuid);
  await received.until((r) => r.uuids.length >= 3, 10_000);
  expect(received.errors).toEqual([]);
  expect(received.uuids.sort()).toEqual(inserted.sort());
  expect(accepts.some((accept) => accept.includes('text/event-stream'))).toBe(true);
  await iterator.return?.();
}, 30_000);
