/**
 * A gateway listening on a loopback port (HTTP, SSE and WebSocket, as src/main.ts wires them) over
 * a fresh simulator, with short live-poll intervals, plus real graphql-sse and graphql-ws clients.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { loadConfig, type Config } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { createLiveAudit, type LiveAudit } from '../../src/audit/live/index.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../simulator/index.js';
import { createUpstreams } from '../../src/upstream/index.js';
import { attachWebSockets, type WebSockets } from '../../src/server/websocket/index.js';
import type { ExecutionLimits } from '../../src/server/websocket/operations.js';
import { createGateway } from '../../src/gateway/yoga.js';
import { MemoryLog } from '../helpers/memory-log.js';
import { simulatorEnv } from '../helpers/simulator-env.js';
import { closeServer } from '../helpers/listen.js';
import { startHoldingProxy, type HoldingProxy } from '../helpers/holding-proxy.js';

export const API_KEY = 'live-test-key';
export { auditCalls } from '../helpers/gateway.js';

export interface LiveServer {
  readonly url: string;
  readonly sim: Simulator;
  /** In front of the simulator's identity routes, with `holdIdentity`. */
  readonly upstream: HoldingProxy | undefined;
  readonly config: Config;
  readonly liveAudit: LiveAudit;
  readonly webSockets: WebSockets;
  logs(): Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startLiveServer(
  options: {
    env?: Record<string, string>;
    simulator?: SimulatorOptions;
    pageSize?: number;
    maxBuffered?: number;
    stallMs?: number;
    endGraceMs?: number;
    /** Sees every HTTP request before the gateway does. */
    onRequest?: (request: IncomingMessage) => void;
    /** Sees every connection the server accepts (HTTP and WebSocket alike). */
    onConnection?: (socket: Socket) => void;
    executionLimits?: ExecutionLimits;
    /** What one WebSocket may have queued for its client. */
    sendQueueBytes?: number;
    /** How long a WebSocket may take to send `connection_init`. */
    connectionInitWaitTimeout?: number;
    /** Identity calls held in flight until the test lets them go (`LiveServer.upstream`). */
    holdIdentity?: (request: IncomingMessage) => boolean;
  } = {},
): Promise<LiveServer> {
  const sim = await startSimulator({ eventCount: 200, ...options.simulator });
  const upstream = options.holdIdentity ? await startHoldingProxy(sim.url, options.holdIdentity) : undefined;
  const config = loadConfig({
    ...simulatorEnv(sim),
    ...(upstream ? { IDENTITY_BASE_URL: upstream.url } : {}),
    GATEWAY_API_KEYS: API_KEY,
    AUDIT_LIVE_POLL_MS: '50',
    AUDIT_CACHE_SETTLE_MS: '5000',
    LOG_LEVEL: 'debug',
    ...options.env,
  });
  const memory = new MemoryLog();
  const log = createLogger({ level: config.logLevel, destination: memory });
  // No per-call retries: the poller's own retrying is what these tests watch.
  const upstreams = createUpstreams(config, { retry: { maxRetries: 0 } });
  const liveAudit = createLiveAudit(config, upstreams, log, {
    ...(options.pageSize ? { pageSize: options.pageSize } : {}),
    ...(options.maxBuffered ? { maxBuffered: options.maxBuffered } : {}),
    ...(options.stallMs ? { stallMs: options.stallMs } : {}),
    ...(options.endGraceMs ? { endGraceMs: options.endGraceMs } : {}),
  });
  const yoga = createGateway({ config, upstreams, log, liveAudit });
  const server = createServer((request, response) => {
    options.onRequest?.(request);
    void yoga(request, response);
  });
  if (options.onConnection) server.on('connection', options.onConnection);
  const webSockets = attachWebSockets(server, {
    yoga,
    liveAudit,
    log,
    maxPayloadBytes: config.maxRequestBytes,
    ...(options.executionLimits ? { executionLimits: options.executionLimits } : {}),
    ...(options.sendQueueBytes ? { sendQueueBytes: options.sendQueueBytes } : {}),
    ...(options.connectionInitWaitTimeout ? { connectionInitWaitTimeout: options.connectionInitWaitTimeout } : {}),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    sim,
    upstream,
    config,
    liveAudit,
    webSockets,
    logs: () => memory.lines(),
    async close() {
      await webSockets.close();
      await closeServer(server);
      await upstreams.close();
      await upstream?.close();
      await sim.close();
    },
  };
}

export const LIVE_QUERY = /* GraphQL */ `
  subscription Live($filter: AuditLiveFilter, $since: DateTime, $resumeAfter: String) {
    auditEventAdded(filter: $filter, since: $since, resumeAfter: $resumeAfter) {
      resumeAfter
      node { ... on AuditRecord { uuid timestamp objectType objectAction } }
    }
  }
`;

export interface LiveNode {
  uuid: string;
  timestamp: string;
  objectType: string;
  objectAction: string | null;
}

export interface LivePayload {
  data?: { auditEventAdded: { resumeAfter: string; node: LiveNode } } | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** Collects what one subscription receives, and lets a test wait for a number of records. */
export class Received {
  readonly payloads: LivePayload[] = [];
  done = false;
  failure: unknown;
  #waiters: (() => void)[] = [];

  constructor(iterator: AsyncIterableIterator<LivePayload>) {
    void (async () => {
      try {
        for await (const payload of iterator) {
          this.payloads.push(payload);
          this.#wake();
        }
      } catch (error) {
        this.failure = error;
      } finally {
        this.done = true;
        this.#wake();
      }
    })();
  }

  get nodes(): LiveNode[] {
    return this.payloads.flatMap((p) => (p.data ? [p.data.auditEventAdded.node] : []));
  }

  get uuids(): string[] {
    return this.nodes.map((n) => n.uuid);
  }

  get errors() {
    return this.payloads.flatMap((p) => p.errors ?? []);
  }

  get lastToken(): string {
    const last = this.payloads.findLast((p) => p.data);
    if (!last?.data) throw new Error('no record received yet');
    return last.data.auditEventAdded.resumeAfter;
  }

  #wake() {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** Resolves once `test` holds, or rejects after `timeoutMs`. */
  async until(test: (r: this) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out: ${this.uuids.length} records, done=${this.done}, errors=${JSON.stringify(this.errors)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

export function sseClient(url: string, headers: Record<string, string> = { 'x-api-key': API_KEY }) {
  return createSseClient({ url, headers, retryAttempts: 0 });
}

export function wsClient(url: string, connectionParams: Record<string, string> = { 'x-api-key': API_KEY }): WsClient {
  return createWsClient({ url: url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
}

export type Variables = { filter?: Record<string, string>; since?: string; resumeAfter?: string };

export function subscribeSse(url: string, variables: Variables = {}, headers?: Record<string, string>) {
  const client = sseClient(url, headers);
  const iterator = client.iterate({ query: LIVE_QUERY, variables }) as AsyncIterableIterator<LivePayload>;
  return { received: new Received(iterator), stop: () => iterator.return?.(), client };
}

export function subscribeWs(url: string, variables: Variables = {}, connectionParams?: Record<string, string>) {
  const client = wsClient(url, connectionParams);
  const iterator = client.iterate({ query: LIVE_QUERY, variables }) as AsyncIterableIterator<LivePayload>;
  return { received: new Received(iterator), stop: () => iterator.return?.(), client };
}

/** Starts subscriptions and waits until the gateway has registered them. */
export async function registered<T>(server: LiveServer, start: () => T, count = 1): Promise<T> {
  const before = server.liveAudit.stats().started;
  const result = start();
  const deadline = Date.now() + 10_000;
  while (server.liveAudit.stats().started < before + count) {
    if (Date.now() > deadline) throw new Error('subscription not registered');
    await sleep(5);
  }
  return result;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
