/**
 * Routers in front of the gateway: the gateway in upstream mode against the simulator with API-key
 * auth on, next to a second subgraph ("deployments"), composed into a supergraph; and a Hive
 * Gateway process (the `hive-gateway` binary) serving that supergraph.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import { parse } from 'graphql';
import type { Tracing } from '../../src/gateway/plugins/observability/tracing.js';
import { subgraphSdl } from '../../src/gateway/schema/index.js';
import { MISSING_SESSION_ID, SESSION_IDS } from '../../simulator/index.js';
import { DEPLOYMENTS_SDL, deploymentsSubgraph, listen, type Listening } from './federation.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/** The key a router sends (or a caller forwards); one of the gateway's GATEWAY_API_KEYS. */
export const CONTENT_API_KEY = 'content-gateway-key-for-routers-0123';

export const DEPLOYMENTS = [
  { id: 'dep-1', sessionId: SESSION_IDS.ready },
  { id: 'dep-2', sessionId: MISSING_SESSION_ID },
  { id: 'dep-3', sessionId: null },
];

/** Deployments from the second subgraph, their sessions' files through `_entities` from the gateway. */
export const ACROSS_ENTITIES = /* GraphQL */ `
  query Deployments {
    deployments {
      id
      session { id files { name status } }
    }
  }
`;

export interface Subgraphs {
  readonly gateway: TestGateway;
  readonly content: Listening;
  readonly deployments: Listening;
  /** Composed from the gateway's subgraph SDL (what schema/subgraph.graphql holds). */
  readonly supergraphSdl: string;
  close(): Promise<void>;
}

export async function startSubgraphs(options: { tracing?: Tracing } = {}): Promise<Subgraphs> {
  const gateway = await startTestGateway({
    env: { GATEWAY_API_KEYS: `some-other-key-456789,${CONTENT_API_KEY}`, GATEWAY_ALLOW_ANONYMOUS: 'false' },
    gateway: { tracing: options.tracing },
  });
  const [content, deployments] = await Promise.all([listen(gateway.yoga), listen(deploymentsSubgraph(DEPLOYMENTS))]);
  const composed = composeServices([
    { name: 'content', typeDefs: parse(subgraphSdl()), url: content.url },
    { name: 'deployments', typeDefs: parse(DEPLOYMENTS_SDL), url: deployments.url },
  ]);
  if (compositionHasErrors(composed)) throw new Error(composed.errors.map((e) => e.message).join('\n'));
  return {
    gateway,
    content,
    deployments,
    supergraphSdl: composed.supergraphSdl,
    async close() {
      await Promise.all([content.close(), deployments.close()]);
      await gateway.close();
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RouterProcess {
  /** The router's GraphQL endpoint. */
  readonly url: string;
  output(): string;
  stop(): Promise<void>;
}

/** How long a router process may take to answer its readiness check. */
export const ROUTER_START_MS = 90_000;

/** `hive-gateway supergraph <file> -c <config>`, resolved once it answers its readiness check. */
export async function runHiveGateway(options: {
  configPath: string;
  supergraphSdl: string;
  env?: Record<string, string>;
  /** OTLP/HTTP traces URL (…/v1/traces) for the router's own spans. */
  openTelemetry?: string;
}): Promise<RouterProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'hive-gateway-'));
  const supergraphPath = join(dir, 'supergraph.graphql');
  await writeFile(supergraphPath, options.supergraphSdl);
  const port = await freePort();
  const root = new URL('../..', import.meta.url);
  const child = spawn(
    process.execPath,
    [
      // It stops itself if this test process dies before stopping it (a set-up cut off by vitest).
      '--import',
      join(root.pathname, 'bench/exit-with-parent.mjs'),
      join(root.pathname, 'node_modules/@graphql-hive/gateway/dist/bin.js'),
      'supergraph',
      supergraphPath,
      '--config-path',
      join(root.pathname, options.configPath),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--disable-websockets',
      ...(options.openTelemetry ? ['--opentelemetry', options.openTelemetry] : []),
    ],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };

  const url = `http://127.0.0.1:${port}`;
  // Hive Gateway loads its bundle and compiles its TypeScript config first: seconds alone, and
  // up to a minute when the suite's process tests keep both cores busy at the same time.
  const deadline = Date.now() + ROUTER_START_MS;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`hive-gateway exited with ${child.exitCode}:\n${output}`);
    }
    // Bounded: a router still starting may take the connection and not answer yet.
    const ready = await fetch(`${url}/readiness`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`hive-gateway was not ready within ${ROUTER_START_MS / 1000} s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url: `${url}/graphql`, output: () => output, stop };
}

export interface RouterAnswer {
  readonly status: number;
  readonly body: { data?: any; errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, any> }[] };
}

export async function postTo(url: string, query: string, headers: Record<string, string> = {}): Promise<RouterAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: (await response.json()) as RouterAnswer['body'] };
}
