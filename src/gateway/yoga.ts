/**
 * The Yoga server: plugins, error masking, limits, caller auth, GraphiQL, health and metrics.
 * It builds and never listens (src/main.ts listens; tests call yoga.fetch).
 */
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { Config } from '../lib/config.js';
import { ANONYMOUS, createGatewayContext, useOperationDeadline, type GatewayContext, type RequestState } from './context.js';
import { clientErrorCode, errorMaskingFor } from './error-masking.js';
import { exampleOperations, type ExampleOperation } from './examples/index.js';
import type { Logger } from '../lib/logger.js';
import { callerOf, useCallerAuth } from './plugins/auth/caller-auth.js';
import {
  createPersistedQueryStore,
  DEFAULT_PERSISTED_QUERY_LIMITS,
  useAutomaticPersistedQueries,
} from './plugins/auth/automatic-persisted-queries.js';
import { useIncrementalErrorMasking } from './plugins/observability/incremental-masking.js';
import { useJitForAuditPages } from './plugins/compat/jit.js';
import { useOperationLimits } from './plugins/limits/operation-limits.js';
import { createParseCache } from './plugins/limits/parse-cache.js';
import { createLiveAudit, useLiveAudit, type LiveAudit } from '../audit/live/index.js';
import { useResponseCompression } from './plugins/http/compression.js';
import { useGraphiQL } from './plugins/http/graphiql.js';
import { useNoEchoedInput } from './plugins/http/no-echo.js';
import { useNotAcceptable } from './plugins/http/not-acceptable.js';
import { useAccessLog, useErrorLog, yogaLogger } from './plugins/observability/logging.js';
import { useMetricsToken, type GatewayMetrics } from './plugins/observability/metrics.js';
import { usePersistedOperationsFile } from './plugins/auth/persisted-operations.js';
import { useProbe } from './plugins/http/probes.js';
import { useRequestBodyLimit } from './plugins/http/request-body-limit.js';
import { useHeldRequests } from './plugins/limits/held-requests.js';
import { createMemoryBudget } from '../lib/memory-budget.js';
import type { ByteReservations } from '../lib/byte-reservations.js';
import { useRequestParams } from './plugins/http/request-params.js';
import { useStreamInitialCount } from './plugins/limits/stream-initial-count.js';
import { useUnsupportedMediaType } from './plugins/http/unsupported-media-type.js';
import { requestIdOf, useRequestId } from './plugins/http/request-id.js';
import type { Tracing } from './plugins/observability/tracing.js';
import { useRowErrors } from './plugins/execution/audit-row-errors.js';
import { schema } from './schema/index.js';
import { useWebSocketRequests } from './plugins/http/websocket-requests.js';
import type { Upstreams } from '../upstream/types.js';
import type { SharedStore } from '../upstream/shared-store/index.js';

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
  /** Live audit subscriptions; one is made from the configuration when not given. */
  readonly liveAudit?: LiveAudit | undefined;
  /** What requests and subscriptions hold (the HTTP server's, src/server/http-server.ts); one is made from the configuration when not given. */
  readonly memoryBudget?: ByteReservations | undefined;
  /** State shared with the other replicas (REDIS_URL): persisted queries. */
  readonly sharedStore?: SharedStore | undefined;
}

/** Yoga's per-request server context: the plugins record what they learn about the request there. */
export type ServerContext = RequestState & Record<string, unknown>;
export type GatewayYoga = YogaServerInstance<ServerContext, GatewayContext>;

/** Introspection for everyone, for callers with a key or JWT, or for nobody (config.introspection). */
function useIntrospectionPolicy(policy: Config['introspection']): Plugin[] {
  if (policy === 'all') return [];
  return [
    {
      onValidate: ({ addValidationRule, context }) => {
        if (policy === 'authenticated' && callerOf(context as RequestState).id !== ANONYMOUS.id) return;
        addValidationRule(NoSchemaIntrospectionCustomRule);
      },
    },
  ];
}

const CORS_ALLOWED_HEADERS = [
  'content-type',
  'x-api-key',
  'authorization',
  'apollo-require-preflight',
  'x-graphql-yoga-csrf',
  'x-request-id',
  'traceparent',
  'tracestate',
  'apollographql-client-name',
  'apollographql-client-version',
];

const LOOPBACK_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

/** Listed origins only: any other origin (and `Origin: null`) gets no CORS header at all. */
function corsFor(origins: readonly string[], loopback: boolean) {
  if (origins.length === 0 && !loopback) return false as const;
  const allowed = new Set(origins);
  return (request: Request) => {
    const origin = request.headers.get('origin');
    if (origin === null || !(allowed.has(origin) || (loopback && LOOPBACK_ORIGIN.test(origin)))) return false as const;
    return { origin, credentials: true, allowedHeaders: CORS_ALLOWED_HEADERS, exposedHeaders: ['x-request-id'] };
  };
}

export function createGateway({
  config,
  upstreams,
  log,
  metrics,
  tracing,
  isReady = () => true,
  examples = exampleOperations(),
  liveAudit,
  memoryBudget,
  sharedStore,
}: GatewayOptions): GatewayYoga {
  const loggedErrors = new WeakSet<object>();
  const maskError = errorMaskingFor(config.maxRequestBytes);
  const parseCache = createParseCache();
  const plugins: Plugin[] = [
    useRequestId(),
    useWebSocketRequests(),
    // Before any plugin that waits (caller auth, large-operation turns): a request is counted while it waits.
    useHeldRequests(memoryBudget ?? createMemoryBudget(config.connections.maxRequestBytesInFlight)),
    // Before the access log, so that its line lists the code of the 406 this sets.
    useNotAcceptable(),
    useAccessLog(log),
    useResponseCompression(),
    useNoEchoedInput(),
    useProbe('/healthz', () => true),
    useProbe('/readyz', isReady),
    useGraphiQL({
      title: 'Identity & content library gateway',
      endpoint: '/graphql',
      introspection: config.introspection !== 'off',
      defaultTabs: examples.map((op) => ({
        query: op.query,
        variables: op.variables ? JSON.stringify(op.variables, null, 2) : null,
        headers: config.apiKeys.length > 0 ? JSON.stringify({ 'x-api-key': '<your key>' }, null, 2) : null,
      })),
    }),
    ...(config.metricsToken ? [useMetricsToken(config.metricsToken)] : []),
    ...(metrics ? [metrics.plugin({ clientErrorCode: (error) => clientErrorCode(maskError, error) })] : []),
    // Browsers must send a header a simple cross-site form or GET cannot.
    useCSRFPrevention({ requestHeaders: ['x-graphql-yoga-csrf', 'x-api-key', 'authorization', 'apollo-require-preflight'] }),
    ...useCallerAuth({ apiKeys: config.apiKeys, allowAnonymous: config.allowAnonymous, jwt: config.jwt, log }),
    config.persistedOperations
      ? usePersistedOperationsFile(config.persistedOperations)
      : useAutomaticPersistedQueries(createPersistedQueryStore(DEFAULT_PERSISTED_QUERY_LIMITS, sharedStore)),
    // Before the operation limits: an operation it refuses never waits for a large-operation slot.
    useStreamInitialCount(),
    ...useOperationLimits({ largeOperationConcurrency: config.largeOperationConcurrency }),
    ...useIntrospectionPolicy(config.introspection),
    parseCache.forgetInvalidDocuments,
    useErrorLog(loggedErrors) as Plugin,
    useRowErrors() as Plugin,
    useJitForAuditPages(),
    // @defer/@stream over multipart/mixed and SSE (text/event-stream), per the client's Accept.
    useDeferStream(),
    useOperationDeadline() as Plugin,
    useIncrementalErrorMasking(maskError, loggedErrors),
    useLiveAudit(liveAudit ?? createLiveAudit(config, upstreams, log, {}, sharedStore)),
    // Reads query strings and form bodies in place of Yoga's parsers, which throw on a bad JSON parameter.
    useRequestParams(),
    // After every plugin that may choose a request parser: it wraps the one chosen, as Yoga's own limit would.
    useRequestBodyLimit(config.maxRequestBytes),
    // After the body limit, which has no parser to wrap here: the refusal reads no body.
    useUnsupportedMediaType(),
    // Last: its execute function (the operation span made active for the resolvers and upstream
    // calls) must wrap whatever execute function a plugin before it set, graphql-jit's included.
    ...(tracing ? [tracing.plugin()] : []),
  ];

  return createYoga<ServerContext, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    // Yoga always adds its own health check, which answers every URL that ends with this endpoint.
    // No URL of a request ends with a space (Node's parser refuses one in a request target), so
    // it answers none: useProbe answers /healthz and /readyz by their path.
    healthCheckEndpoint: ' ',
    landingPage: false,
    logging: yogaLogger(log, loggedErrors),
    maskedErrors: { maskError },
    // Bounded in bytes: Yoga's own keeps 1024 documents of any size (src/gateway/plugins/limits/parse-cache.ts).
    parserAndValidationCache: { documentCache: parseCache.documents, errorCache: parseCache.errors },
    // useRequestBodyLimit: by the announced length, and counted while read when not framed by it.
    maxRequestBodySize: false,
    cors: corsFor(config.corsOrigins, config.corsLoopbackOrigins),
    // Served by useGraphiQL: a small page and cacheable, pre-compressed assets.
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
    plugins,
  });
}
