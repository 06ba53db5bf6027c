/**
 * Puts the gateway's LiveAudit on every GraphQL context, and answers a subscription refused for
 * the subscription limit with HTTP 429 and `retry-after` (SSE) instead of a 200 stream holding one error.
 */
import { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { GatewayError } from '../../lib/errors.js';
import { connectionEnderOf } from './connection.js';
import type { LiveAudit, LiveSubscribeArgs } from './hub.js';
import type { LiveItem } from './subscriber.js';

const LIVE_AUDIT_FIELD = 'liveAudit';
const RETRY_AFTER_SECONDS = '1';

export function liveAuditOf(context: object): LiveAudit {
  const live = (context as { [LIVE_AUDIT_FIELD]?: LiveAudit })[LIVE_AUDIT_FIELD];
  if (!live) throw new Error('live audit subscriptions are not set up on this server');
  return live;
}

/** Starts a subscription for an operation, able to end the operation's connection (see connection.ts). */
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
