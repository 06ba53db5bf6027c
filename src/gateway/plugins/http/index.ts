/** GraphQL over HTTP: request id, WebSocket requests, media types, compression, CORS, body; probes and GraphiQL. */
import type { Plugin } from 'graphql-yoga';
import { useGraphiQL } from '../compat/graphiql.js';
import { useProbe } from '../compat/probes.js';
import { useResponseCompression } from '../compat/compression.js';
import { useNoEchoedInput, useNotAcceptable, useUnsupportedMediaType } from '../compat/coded-refusals.js';
import { useRequestBodyLimit } from '../compat/request-body-limit.js';
import { useRequestParams } from '../compat/request-params.js';
import { useRequestId } from './request-id.js';
import { useWebSocketRequests } from './websocket-requests.js';

export function httpPlugins(): Plugin[] {
  return [
    // First: the request's scope, in which every later hook runs and logs.
    useRequestId() as Plugin,
    useWebSocketRequests() as Plugin,
    // After the WebSocket's result processor: it answers only where none applies.
    useNotAcceptable(),
    useNoEchoedInput(),
    useResponseCompression(),
  ];
}

export function bodyPlugins(maxRequestBytes: number): Plugin[] {
  return [
    useRequestParams(),
    // After every plugin that may choose a request parser: each wraps or stands in for the one chosen.
    useRequestBodyLimit(maxRequestBytes),
    useUnsupportedMediaType(),
  ];
}

export function pagePlugins({ isReady, ...graphiql }: Parameters<typeof useGraphiQL>[0] & { isReady: () => boolean }): Plugin[] {
  return [useProbe('/healthz', () => true), useProbe('/readyz', isReady), useGraphiQL(graphiql)];
}

const CORS_ALLOWED_HEADERS = [
  'content-type', 'x-api-key', 'authorization', 'apollo-require-preflight', 'x-graphql-yoga-csrf', 'x-request-id',
  'traceparent', 'tracestate', 'apollographql-client-name', 'apollographql-client-version',
];

const LOOPBACK_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

/** Yoga's `cors` option for listed origins only: any other (and `Origin: null`) gets no CORS header at all. */
export function corsFor(origins: readonly string[], loopback: boolean) {
  if (origins.length === 0 && !loopback) return false as const;
  const allowed = new Set(origins);
  return (request: Request) => {
    const origin = request.headers.get('origin');
    if (origin === null || !(allowed.has(origin) || (loopback && LOOPBACK_ORIGIN.test(origin)))) return false as const;
    return { origin, credentials: true, allowedHeaders: CORS_ALLOWED_HEADERS, exposedHeaders: ['x-request-id'] };
  };
}
