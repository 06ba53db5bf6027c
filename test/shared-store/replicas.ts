/**
 * Gateways as replicas: several in-process gateways on one upstream and one Redis, each with its
 * own shared store, metrics and memory log, driven through yoga.fetch.
 */
import { loadConfig, type Config } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { createMetrics, type GatewayMetrics } from '../../src/gateway/plugins/observability/metrics.js';
import { createUpstreams, type GatewayUpstreams } from '../../src/upstream/index.js';
import { createSharedStore, type SharedStore } from '../../src/upstream/shared-store/store.js';
import { createGateway, type GatewayYoga } from '../../src/gateway/yoga.js';
import type { GraphQLResponse } from '../helpers/gateway.js';
import { MemoryLog } from '../helpers/memory-log.js';

export interface Replica {
  readonly config: Config;
  readonly yoga: GatewayYoga;
  readonly store: SharedStore;
  readonly metrics: GatewayMetrics;
  readonly upstreams: GatewayUpstreams;
  logs(): Record<string, any>[];
  logText(): string;
  /** A GraphQL POST; `extensions` as Apollo clients send them (APQ). */
  post(body: { query?: string; variables?: Record<string, unknown>; extensions?: Record<string, unknown> }): Promise<GraphQLResponse>;
  redisUp(): Promise<number | undefined>;
  close(): Promise<void>;
}

/** `env`: the upstream's variables (simulatorEnv, say) and any others; REDIS_URL is added. */
export function startReplica(redisUrl: string, env: Record<string, string>): Replica {
  const config = loadConfig({ GATEWAY_ALLOW_ANONYMOUS: 'true', LOG_LEVEL: 'debug', REDIS_TIMEOUT_MS: '300', ...env, REDIS_URL: redisUrl });
  const memory = new MemoryLog();
  const log = createLogger({ level: config.logLevel, destination: memory });
  const metrics = createMetrics();
  const store = createSharedStore(config.redis, log)!;
  metrics.observeSharedStore(store);
  const upstreams = createUpstreams(config, { events: metrics.upstreamEvents, sharedStore: store });
  const yoga = createGateway({ config, upstreams, log, metrics, sharedStore: store });
  return {
    config,
    yoga,
    store,
    metrics,
    upstreams,
    logs: () => memory.lines(),
    logText: () => memory.text(),
    async post(body) {
      const response = await yoga.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      });
      return (await response.json()) as GraphQLResponse;
    },
    async redisUp() {
      return (await metrics.registry.getSingleMetric('gateway_redis_up')!.get()).values[0]?.value;
    },
    async close() {
      await upstreams.close();
      await store.close();
    },
  };
}
