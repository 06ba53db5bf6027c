/** Puts the LiveAudit on every context; a subscription refused for a limit is answered 429 with `retry-after` (SSE). */
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

/** Ends an operation's connection if it holds unsent data: neither transport notices, both wait for the client. */
function connectionEnderOf(context: object): (() => void) | undefined {
  const socket = (context as { [LIVE_SOCKET]?: { endIfUndrained(): void } })[LIVE_SOCKET];
  if (socket) return () => socket.endIfUndrained();
  const res = (context as { res?: ServerResponse }).res;
  if (typeof res?.destroy !== 'function') return undefined;
  return () => {
    if (!res.writableFinished) res.destroy();
  };
}

export function subscribeLive(context: object, args: LiveSubscribeArgs): AsyncIterableIterator<LiveItem> {
  return liveAuditOf(context).subscribe(args, connectionEnderOf(context));
}

const isRateLimited = (error: GraphQLError) =>
  error.extensions?.code === 'RATE_LIMITED' ||
  (error.originalError instanceof GatewayError && error.originalError.code === 'RATE_LIMITED');

export function useLiveAudit(live: LiveAudit): Plugin {
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
