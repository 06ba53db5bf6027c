/** What every resolver receives: built once per GraphQL request. */
import { lazyChild, type Logger } from './logger.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { Upstreams } from './upstream/types.js';

export interface Caller {
  /** `anonymous`, `api-key:<n>` (index of the matching key), or a JWT subject. */
  readonly id: string;
  /** When the credential that admitted the caller expires (a JWT's `exp`), in epoch milliseconds. */
  readonly expiresAt?: number;
}

export const ANONYMOUS: Caller = { id: 'anonymous' };

/**
 * What the plugins learn about a request before it is parsed, kept on Yoga's per-request server
 * context: Yoga starts the GraphQL context from that object, so resolvers see the same values.
 */
export type RequestState = {
  /** Set by the request-id plugin when the request arrives. */
  requestId?: string;
  /** Set by the caller-auth plugin once the caller is admitted; absent: anonymous. */
  caller?: Caller;
};

export interface GatewayContext {
  readonly requestId: string;
  readonly log: Logger;
  readonly caller: Caller;
  readonly loaders: Loaders;
  /** When this request's upstream calls must give up (client gone). */
  readonly signal: AbortSignal | undefined;
}

export function createGatewayContext(input: {
  upstreams: Upstreams;
  requestId: string;
  log: Logger;
  caller: Caller;
  signal?: AbortSignal;
}): GatewayContext {
  const log = lazyChild(input.log, { requestId: input.requestId });
  return {
    requestId: input.requestId,
    log,
    caller: input.caller,
    signal: input.signal,
    loaders: createLoaders(input.upstreams, { log, signal: input.signal }),
  };
}
