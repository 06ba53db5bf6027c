/**
 * Puts the gateway's LiveAudit on every GraphQL context, and answers a subscription refused for
 * the subscription limit with HTTP 429 (SSE) instead of a 200 stream holding one error.
 */
import { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { GatewayError } from '../errors.js';
import type { LiveAudit } from './hub.js';

const LIVE_AUDIT_FIELD = 'liveAudit';

export function liveAuditOf(context: object): LiveAudit {
  const live = (context as { [LIVE_AUDIT_FIELD]?: LiveAudit })[LIVE_AUDIT_FIELD];
  if (!live) throw new Error('live audit subscriptions are not set up on this server');
  return live;
}

const isRateLimited = (error: GraphQLError) =>
  error.extensions?.code === 'RATE_LIMITED' ||
  (error.originalError instanceof GatewayError && error.originalError.code === 'RATE_LIMITED');

export function useLiveAudit(live: LiveAudit): Plugin {
  return {
    onContextBuilding: ({ extendContext }) => extendContext({ [LIVE_AUDIT_FIELD]: live } as object),
    onSubscribe: () => ({
      onSubscribeResult: ({ result, setResult }) => {
        if (isAsyncIterable(result) || !result.errors?.some(isRateLimited)) return;
        setResult({ ...result, extensions: { ...result.extensions, http: { status: 429 } } });
      },
    }),
  };
}
