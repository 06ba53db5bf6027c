/** Puts the LiveAudit on every context; a subscription refused for a limit is answered 429 with `retry-after` (SSE). */
import type { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { LIVE_AUDIT_FIELD, type LiveAudit } from '../../../audit/live/index.js';
import { GatewayError } from '../../../lib/errors.js';

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
        setResult({ ...result, extensions: { ...result.extensions, http: { status: 429, headers: { 'retry-after': '1' } } } });
      },
    }),
    // A subscription asked for as plain JSON is answered 406, its stream never read: ended now, not holding a slot.
    onResponse: ({ request, response }) => {
      const stream = streams.get(request);
      streams.delete(request);
      if (stream && response.status !== 200) void stream[Symbol.asyncIterator]().return?.();
    },
  };
}
