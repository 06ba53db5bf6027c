/** What every resolver receives: built once per GraphQL request. */
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { lazyChild, type Logger } from '../lib/logger.js';
import { createLoaders } from './loaders.js';
import { createOperationDeadline } from '../upstream/deadline.js';
import type { CallOptions, Upstreams } from '../upstream/types.js';

export interface Caller {
  /** `anonymous`, `api-key:<n>` (index of the matching key), or a JWT subject. */
  readonly id: string;
  /** When the credential that admitted the caller expires (a JWT's `exp`), in epoch milliseconds. */
  readonly expiresAt?: number;
}

export const ANONYMOUS: Caller = { id: 'anonymous' };

/** What plugins learn before parsing, on Yoga's server context (the GraphQL context starts from it). */
export type RequestState = {
  requestId?: string;
  /** Absent: anonymous. */
  caller?: Caller;
};

export type GatewayContext = Readonly<ReturnType<typeof createGatewayContext>>;

export function createGatewayContext(input: {
  upstreams: Upstreams;
  requestId: string;
  log: Logger;
  caller: Caller;
  signal?: AbortSignal;
  requestTimeoutMs: number;
}) {
  const log = lazyChild(input.log, { requestId: input.requestId });
  const deadline = createOperationDeadline(input.requestTimeoutMs, input.signal);
  const call: CallOptions = {
    log,
    // Read by each upstream call: the deadline's one timer is made by the first.
    get signal() {
      return deadline.signal;
    },
    expiresAt: deadline.expiresAt,
  };
  return {
    log,
    caller: input.caller,
    /** Every upstream call of the operation, @defer and @stream parts included, ends by REQUEST_TIMEOUT_MS. */
    deadline,
    loaders: createLoaders(input.upstreams, call),
  };
}

/** Ends each operation's deadline with its last part; a subscription's at once (catch-up reads have their own). */
export function useOperationDeadline(): Plugin<GatewayContext> {
  // One set of hooks for every operation: each reads its deadline from the arguments it is handed.
  const executeHooks = {
    onExecuteDone: ({ args, result }: { args: { contextValue: GatewayContext }; result: unknown }) => {
      const deadline = args.contextValue.deadline;
      if (!isAsyncIterable(result)) return deadline.dispose();
      return { onEnd: () => deadline.dispose() };
    },
  };
  const subscribeHooks = {
    onSubscribeResult: ({ args }: { args: { contextValue: GatewayContext } }) => args.contextValue.deadline.dispose(),
  };
  return {
    onExecute: () => executeHooks,
    onSubscribe: () => subscribeHooks,
  };
}
