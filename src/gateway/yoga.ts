/** The Yoga server: it builds and never listens (src/main.ts listens; tests call yoga.fetch). */
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from '../lib/config.js';
import { createGatewayContext, type GatewayContext, type RequestState } from './context.js';
import { clientErrorCode, errorMaskingFor } from './error-masking.js';
import { exampleOperations, type ExampleOperation } from './examples/index.js';
import type { Logger } from '../lib/logger.js';
import { authPlugins } from './plugins/auth/index.js';
import { callerOf } from './plugins/auth/caller-auth.js';
import { executionPlugins } from './plugins/execution/index.js';
import { bodyPlugins, corsFor, httpPlugins, pagePlugins } from './plugins/http/index.js';
import { requestIdOf } from './plugins/http/request-id.js';
import { limitsPlugins } from './plugins/limits/index.js';
import { createParseCache } from './plugins/limits/parse-cache.js';
import { executionObservers, observabilityPlugins } from './plugins/observability/index.js';
import { yogaLogger } from './plugins/observability/logging.js';
import type { GatewayMetrics } from './plugins/observability/metrics.js';
import type { Tracing } from './plugins/observability/tracing.js';
import { createLiveAudit, type LiveAudit } from '../audit/live/index.js';
import { createMemoryBudget, type ByteReservations } from '../lib/byte-reservations.js';
import { schema } from './schema/index.js';
import type { Upstreams } from '../upstream/types.js';
import type { SharedStore } from '../upstream/shared-store/store.js';

export interface GatewayOptions {
  readonly config: Config;
  readonly upstreams: Upstreams;
  readonly log: Logger;
  readonly metrics?: GatewayMetrics | undefined;
  readonly tracing?: Tracing | undefined;
  /** false once the gateway starts draining: /readyz answers 503. */
  readonly isReady?: () => boolean;
  /** GraphiQL's tabs; demo mode passes ones with the simulator's session ids. */
  readonly examples?: readonly ExampleOperation[];
  readonly liveAudit?: LiveAudit | undefined;
  /** What requests and subscriptions hold: the HTTP server's, or one made from the configuration. */
  readonly memoryBudget?: ByteReservations | undefined;
  /** State shared with the other replicas (REDIS_URL). */
  readonly sharedStore?: SharedStore | undefined;
}

/** Yoga's per-request server context: the plugins record what they learn about the request there. */
export type ServerContext = RequestState & Record<string, unknown>;
export type GatewayYoga = YogaServerInstance<ServerContext, GatewayContext>;

export function createGateway(options: GatewayOptions): GatewayYoga {
  const { config, upstreams, log, sharedStore } = options;
  const loggedErrors = new WeakSet<object>();
  const maskError = errorMaskingFor(config.maxRequestBytes);
  const parseCache = createParseCache();

  return createYoga<ServerContext, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    // Yoga's own health check answers every URL ending with this, and none ends with a space.
    healthCheckEndpoint: ' ',
    landingPage: false,
    logging: yogaLogger(log, loggedErrors),
    maskedErrors: { maskError },
    // Bounded in bytes: Yoga's own keeps 1024 documents of any size.
    parserAndValidationCache: { documentCache: parseCache.documents, errorCache: parseCache.errors },
    // The body limit is bodyPlugins' (plugins/compat/request-body-limit.ts).
    maxRequestBodySize: false,
    cors: corsFor(config.corsOrigins, config.corsLoopbackOrigins),
    // GraphiQL is pagePlugins' (plugins/compat/graphiql.ts).
    graphiql: false,
    context: (initial) =>
      createGatewayContext({
        upstreams,
        requestId: requestIdOf(initial),
        log,
        caller: callerOf(initial),
        signal: initial.request.signal,
        requestTimeoutMs: config.requestTimeoutMs,
      }),
    // Yoga runs each hook in this order. The access log sees the HTTP group's answers (a 406) and
    // times the pages after it; the pages and /metrics answer before CSRF prevention would refuse a
    // bare GET; a request is counted as held before caller auth or APQ may make it wait.
    plugins: [
      ...httpPlugins(),
      ...observabilityPlugins({
        log,
        loggedErrors,
        metrics: options.metrics,
        metricsToken: config.metricsToken,
        clientErrorCode: (error) => clientErrorCode(maskError, error),
      }),
      ...pagePlugins({
        isReady: options.isReady ?? (() => true),
        examples: options.examples ?? exampleOperations(),
        introspection: config.introspection !== 'off',
        withApiKey: config.apiKeys.length > 0,
      }),
      ...limitsPlugins({
        memoryBudget: options.memoryBudget ?? createMemoryBudget(config.connections.maxRequestBytesInFlight),
        largeOperationConcurrency: config.largeOperationConcurrency,
        parseCache,
      }),
      ...authPlugins(config, log, sharedStore),
      ...executionPlugins(options.liveAudit ?? createLiveAudit(config, upstreams, log, {}, sharedStore)),
      // After caller auth: a refused caller gets its 401 whatever its body.
      ...bodyPlugins(config.maxRequestBytes),
      ...executionObservers({ maskError, loggedErrors, tracing: options.tracing }),
    ],
  });
}
