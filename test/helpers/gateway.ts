/**
 * A gateway wired to a fresh simulator over real HTTP, driven in-process through yoga.fetch.
 * Logs go to memory so tests can read them.
 */
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig, type Config } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { createMetrics, type GatewayMetrics } from '../../src/gateway/plugins/observability/metrics.js';
import { DEFAULT_EVENT_COUNT, startSimulator, type Simulator, type SimulatorOptions } from '../../simulator/index.js';
import { createUpstreams, type UpstreamOptions } from '../../src/upstream/index.js';
import type { Upstreams } from '../../src/upstream/types.js';
import { createGateway, type GatewayOptions, type GatewayYoga } from '../../src/gateway/yoga.js';
import { startHoldingProxy, type HoldingProxy } from './holding-proxy.js';
import { listen, type Listening } from './listen.js';
import { MemoryLog } from './memory-log.js';
import { simulatorEnv } from './simulator-env.js';

export { MemoryLog };

export interface GraphQLResponse<TData = any> {
  data?: TData | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } & Record<string, unknown> }[];
}

export interface TestGateway {
  readonly sim: Simulator;
  /** In front of the simulator (both services), with `holdUpstream`. */
  readonly upstream: HoldingProxy | undefined;
  readonly yoga: GatewayYoga;
  readonly config: Config;
  readonly upstreams: Upstreams;
  readonly metrics: GatewayMetrics;
  /** Every log line written so far, parsed. */
  logs(): Record<string, unknown>[];
  /** Raw log text, for "no secret anywhere" assertions. */
  logText(): string;
  execute<TData = any>(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GraphQLResponse<TData>>;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function startTestGateway(
  options: {
    simulator?: SimulatorOptions;
    /** The simulator's full seeded history instead of a few thousand events, which cost far less CPU to generate at every start. */
    fullHistory?: boolean;
    env?: Record<string, string>;
    /** Settings the environment of a test gateway cannot give (those of demo mode). */
    config?: Partial<Config>;
    gateway?: Pick<GatewayOptions, 'tracing' | 'isReady'>;
    upstream?: Pick<UpstreamOptions, 'interceptors'>;
    /** Upstream calls held in flight until the test lets them go (`TestGateway.upstream`). */
    holdUpstream?: (request: IncomingMessage) => boolean;
  } = {},
): Promise<TestGateway> {
  const sim = await startSimulator({ eventCount: options.fullHistory ? DEFAULT_EVENT_COUNT : 3000, ...options.simulator });
  const upstream = options.holdUpstream ? await startHoldingProxy(sim.url, options.holdUpstream) : undefined;
  const config: Config = {
    ...loadConfig({
      ...simulatorEnv(sim),
      ...(upstream ? { IDENTITY_BASE_URL: upstream.url, CONTENT_LIBRARY_URL: upstream.url } : {}),
      GATEWAY_ALLOW_ANONYMOUS: 'true',
      LOG_LEVEL: 'debug',
      ...options.env,
    }),
    ...options.config,
  };
  const memory = new MemoryLog();
  const tracing = options.gateway?.tracing;
  const log = createLogger({ level: config.logLevel, destination: memory, traceIds: !!tracing });
  const metrics = createMetrics();
  const upstreams = createUpstreams(config, {
    events: metrics.upstreamEvents,
    tracer: tracing?.upstreamTracer,
    // Outermost last: what the test watches on the wire includes the trace context.
    interceptors: [...(options.upstream?.interceptors ?? []), ...(tracing ? [tracing.upstreamInterceptor] : [])],
  });
  const yoga = createGateway({ config, upstreams, log, metrics, ...options.gateway });

  const fetchPath = async (path: string, init?: RequestInit): Promise<Response> =>
    yoga.fetch(new URL(path, 'http://gateway.test'), init ?? {});
  return {
    sim,
    upstream,
    yoga,
    config,
    upstreams,
    metrics,
    logs: () => memory.lines(),
    logText: () => memory.text(),
    fetch: fetchPath,
    async execute(query, variables, headers) {
      const response = await fetchPath('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as GraphQLResponse;
    },
    async close() {
      await upstreams.close();
      await upstream?.close();
      await sim.close();
    },
  };
}

/** A test gateway served over real HTTP to the tests of one file: started before them, closed after. */
export function servedGateway(): { readonly gateway: TestGateway; readonly server: Listening } {
  const served = {} as { gateway: TestGateway; server: Listening };
  beforeAll(async () => {
    served.gateway = await startTestGateway();
    served.server = await listen(served.gateway.yoga);
  });
  afterAll(async () => {
    await served.server?.close();
    await served.gateway?.close();
  });
  return served;
}

/** Holds the simulator's audit calls: `holdUpstream: auditCalls`. */
export const auditCalls = (request: IncomingMessage): boolean => request.url!.startsWith('/analytics/reports/audit');
