/**
 * The Yoga server: plugins, error masking, limits, caller auth, GraphiQL, health and metrics.
 * It builds and never listens (src/index.ts listens; tests call yoga.fetch).
 */
import { GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, useReadinessCheck, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { Config } from './config.js';
import { createGatewayContext, type GatewayContext } from './context.js';
import { GatewayError } from './errors.js';
import { exampleOperations } from './examples/index.js';
import type { Logger } from './logger.js';
import { callerOf, useCallerAuth } from './plugins/caller-auth.js';
import { useAutomaticPersistedQueries } from './plugins/automatic-persisted-queries.js';
import { useIncrementalErrorMasking } from './plugins/incremental-masking.js';
import { useJitForAuditPages } from './plugins/jit.js';
import { useBodyLimit, useOperationLimits } from './plugins/limits.js';
import type { GatewayMetrics } from './plugins/metrics.js';
import { usePersistedOperationsFile } from './plugins/persisted-operations.js';
import { requestIdOf, useRequestId } from './plugins/request-id.js';
import type { Tracing } from './plugins/tracing.js';
import { useRowErrors } from './schema/audit-row-errors.js';
import { schema } from './schema/index.js';
import type { Upstreams } from './upstream/types.js';

export interface GatewayOptions {
  readonly config: Config;
  readonly upstreams: Upstreams;
  readonly log: Logger;
  readonly metrics?: GatewayMetrics | undefined;
  readonly tracing?: Tracing | undefined;
  /** false once the gateway starts draining: /readyz answers 503. */
  readonly isReady?: () => boolean;
}

export type ServerContext = Record<string, unknown>;
export type GatewayYoga = YogaServerInstance<ServerContext, GatewayContext>;

function codeOfUncodedError(error: GraphQLError): string {
  const status = error.extensions?.http?.status;
  if (status === 401) return 'UNAUTHENTICATED';
  if (error.message.startsWith('Variable "$')) return 'BAD_USER_INPUT';
  return status !== undefined && status < 500 ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR';
}

/** A GatewayError keeps its code and safe message; anything unexpected is masked. */
function maskError(error: unknown, message: string): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof GatewayError && error instanceof GraphQLError) {
    return new GraphQLError(original.message, {
      nodes: error.nodes,
      path: error.path,
      extensions: { code: original.code },
    });
  }
  // A variable that does not coerce (a bad DateTime, an unknown enum value) is the caller's mistake.
  if (error instanceof GraphQLError && error.originalError instanceof GraphQLError && !error.path) {
    return new GraphQLError(error.message, { nodes: error.nodes, extensions: { code: 'BAD_USER_INPUT' } });
  }
  if (error instanceof GraphQLError && !error.originalError) {
    if (error.extensions?.code !== undefined) return error;
    // Errors of the request phase (plugins) and of variable coercion may come without a code.
    return new GraphQLError(error.message, {
      nodes: error.nodes,
      path: error.path,
      extensions: { ...error.extensions, code: codeOfUncodedError(error) },
    });
  }
  return new GraphQLError(message, {
    ...(error instanceof GraphQLError ? { nodes: error.nodes, path: error.path } : {}),
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  });
}

/** Logs each field error with its detail (never shown to the client) and the request id. */
function useErrorLog(): Plugin<GatewayContext> {
  return {
    onExecute: () => ({
      onExecuteDone: ({ args, result }) => {
        if (!('errors' in result) || !result.errors) return;
        for (const error of result.errors) {
          const original = error.originalError;
          if (original instanceof GatewayError) {
            args.contextValue.log.warn(
              { code: original.code, path: error.path, detail: original.detail },
              original.message,
            );
          } else if (original) {
            args.contextValue.log.error({ err: original, path: error.path }, 'unexpected resolver error');
          }
        }
      },
    }),
  };
}

function useNoIntrospection(): Plugin {
  return { onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) };
}

export function createGateway({ config, upstreams, log, metrics, tracing, isReady = () => true }: GatewayOptions): GatewayYoga {
  const plugins: Plugin[] = [
    useRequestId(),
    ...(tracing ? [tracing.plugin()] : []),
    useBodyLimit(config.maxRequestBytes),
    useReadinessCheck({ endpoint: '/readyz', check: isReady }),
    ...(metrics ? [metrics.plugin()] : []),
    // Browsers must send a header a simple cross-site form or GET cannot.
    useCSRFPrevention({ requestHeaders: ['x-graphql-yoga-csrf', 'x-api-key', 'authorization', 'apollo-require-preflight'] }),
    ...useCallerAuth({ apiKeys: config.apiKeys, allowAnonymous: config.allowAnonymous, jwt: config.jwt }),
    config.persistedOperations ? usePersistedOperationsFile(config.persistedOperations) : useAutomaticPersistedQueries(),
    ...useOperationLimits({ largeOperationConcurrency: config.largeOperationConcurrency }),
    ...(config.introspection ? [] : [useNoIntrospection()]),
    useErrorLog() as Plugin,
    useRowErrors() as Plugin,
    useJitForAuditPages(),
    // @defer/@stream over multipart/mixed and SSE (text/event-stream), per the client's Accept.
    useDeferStream(),
    useIncrementalErrorMasking(maskError),
  ];

  return createYoga<ServerContext, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/healthz',
    landingPage: false,
    logging: log.child({ component: 'yoga' }),
    maskedErrors: { maskError },
    cors: config.corsOrigins.length > 0
      ? {
          origin: [...config.corsOrigins],
          credentials: true,
          allowedHeaders: ['content-type', 'x-api-key', 'authorization', 'x-request-id', 'x-graphql-yoga-csrf'],
          exposedHeaders: ['x-request-id'],
        }
      : false,
    // GraphiQL's assets are served by the gateway itself, so it works without reaching a CDN; the
    // bundle (about 40 MB in memory) is loaded on the first page view, not at start.
    renderGraphiQL: async (options) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    graphiql: {
      title: 'Identity & content library gateway',
      defaultTabs: exampleOperations.map((op) => ({
        query: op.query,
        variables: op.variables ? JSON.stringify(op.variables, null, 2) : null,
        headers: config.apiKeys.length > 0 ? JSON.stringify({ 'x-api-key': '<your key>' }, null, 2) : null,
      })),
    },
    context: ({ request }) =>
      createGatewayContext({
        upstreams,
        requestId: requestIdOf(request),
        log,
        caller: callerOf(request),
        signal: request.signal,
      }),
    plugins,
  });
}
