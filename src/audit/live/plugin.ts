/**
 * Puts the gateway's LiveAudit on every GraphQL context, and answers a subscription refused for
 * the subscription limit with HTTP 429 and `retry-after` (SSE) instead of a 200 stream holding one error.
 */
import type { ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { GatewayError } from '../../lib/errors.js';
import type { LiveAudit, LiveSubscribeArgs } from './hub.js';
import type { LiveItem } from './subscriber.js';

const LIVE_AUDIT_FIELD = 'liveAudit';
/** Where src/server/websocket/index.ts puts the connection's send queue on each operation's context. */
export const LIVE_SOCKET = 'liveSocket';
const RETRY_AFTER_SECONDS = '1';

export function liveAuditOf(context: object): LiveAudit {
  const live = (context as { [LIVE_AUDIT_FIELD]?: LiveAudit })[LIVE_AUDIT_FIELD];
  if (!live) throw new Error('live audit subscriptions are not set up on this server');
  return live;
}

/**
 * Ends the connection of a subscription whose client stopped reading, if it still holds data it
 * could not send: neither transport notices, as both wait for the client. SSE: the Node response
 * Yoga puts on the context; WebSocket: the socket's send queue, shared by its subscriptions.
 */
function connectionEnderOf(context: object): (() => void) | undefined {
  const socket = (context as { [LIVE_SOCKET]?: { endIfUndrained(): void } })[LIVE_SOCKET];
  if (socket) return () => socket.endIfUndrained();
  const res = (context as { res?: ServerResponse }).res;
  if (typeof res?.destroy !== 'function') return undefined;
  return () => {
    if (!res.writableFinished) res.destroy();
  };
}

/** Starts a subscription for an operation, able to end the operation's connection. */
export function subscribeLive(context: object, args: LiveSubscribeArgs): AsyncIterableIterator<LiveItem> {
  const live = liveAuditOf(context);
  const stream = live.subscribe(args);
  live.connect(stream, connectionEnderOf(context));
  return stream;
}

const isRateLimited = (error: GraphQLError) =>
  error.extensions?.code === 'RATE_LIMITED' ||
  (error.originalError instanceof GatewayError && error.originalError.code === 'RATE_LIMITED');

export function useLiveAudit(live: LiveAudit): Plugin {
  /** The stream of an HTTP request until its response is known. */
  const streams = new WeakMap<Request, AsyncIterable<unknown>>();
  return {
    onContextBuilding: ({ extendContext }) => extendContext({ [LIVE_AUDIT_FIELD]: live } as object),
    onSubscribe: ({ args }) => ({
      onSubscribeResult: ({ result, setResult }) => {
        if (isAsyncIterable(result)) {
          const request = (args.contextValue as { request?: Request }).request;
          if (request) streams.set(request, result);
          return;
        }
        if (!result.errors?.some(isRateLimited)) return;
        setResult({ ...result, extensions: { ...result.extensions, http: { status: 429, headers: { 'retry-after': RETRY_AFTER_SECONDS } } } });
      },
    }),
    // A subscription asked for as plain JSON is answered 406 and its stream never read: end it
    // now, or it would hold a subscription slot forever.
    onResponse: ({ request, response }) => {
      const stream = streams.get(request);
      streams.delete(request);
      if (stream && response.status !== 200) void stream[Symbol.asyncIterator]().return?.();
    },
  };
}
