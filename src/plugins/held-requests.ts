/**
 * What a parsed request holds, counted in the memory budget (src/byte-reservations.ts) until it
 * ends. Over HTTP it joins the share the request took for its body on arrival
 * (src/connection-limits.ts), given back once its answer has left; a WebSocket operation takes its
 * own, given back when the operation ends (its request's signal aborts). Past the budget the
 * request is refused at once: HTTP 503 `RATE_LIMITED` with `retry-after`, or the operation's
 * `error` message.
 *
 * A request's body is let go once its parameters are read, and its share becomes what they take.
 * A subscription keeps what it runs on, not its raw request: variables its operation does not
 * declare are dropped, and its share becomes what it still holds (its parameters, its parsed
 * document, its stream and connection) for as long as it is open.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getOperationAST, type DocumentNode } from 'graphql';
import { createGraphQLError, isAsyncIterable, type GraphQLParams, type Plugin } from 'graphql-yoga';
import type { ByteHolding, ByteReservations } from '../byte-reservations.js';
import { requestHolding } from '../connection-limits.js';
import { LIVE_SOCKET } from '../live/connection.js';
import { HeapEstimate } from '../live/read-budget.js';
import { parsedDocumentBytes } from './parse-cache.js';

const RETRY_AFTER_SECONDS = 1;
/** An open subscription beyond its parameters, measured: its request, response, context, stream and socket. */
export const SUBSCRIPTION_BYTES = 24 * 1024;

export const memoryBudgetRefusal = () =>
  createGraphQLError('The gateway holds too many requests at once; retry later.', {
    extensions: { code: 'RATE_LIMITED', http: { status: 503, headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } } },
  });

/** The heap a request's parsed parameters take, by the estimate live records are weighed with. */
export const paramsHeapBytes = (params: Partial<GraphQLParams>): number => new HeapEstimate().valueBytes(params);

/** Drops, in place, the variables the operation does not declare: nothing reads them, and every copy of the request shares the object. */
function dropUndeclaredVariables(variables: unknown, document: DocumentNode, operationName: string | null | undefined): void {
  if (typeof variables !== 'object' || variables === null) return;
  const declared = new Set(getOperationAST(document, operationName)?.variableDefinitions?.map((definition) => definition.variable.name.value));
  for (const name of Object.keys(variables)) if (!declared.has(name)) delete (variables as Record<string, unknown>)[name];
}

/** Where @whatwg-node/node-fetch caches a body once read: its chunks, their bytes joined, its text, its parsed JSON. */
const BODY_CACHES = ['_chunks', '_buffer', '_text', '_json'] as const;

/**
 * Lets go of the body a Request keeps once read: a subscription's request lives as long as the
 * subscription. The chunks are emptied in place: the listener that collected them from the Node
 * request, which stays on it, holds the same array.
 */
function forgetBody(request: object): void {
  const cached = request as Partial<Record<(typeof BODY_CACHES)[number], unknown>>;
  if (Array.isArray(cached._chunks)) cached._chunks.length = 0;
  for (const field of BODY_CACHES) if (cached[field] != null) cached[field] = null;
}

interface HttpContext {
  readonly req?: IncomingMessage;
  readonly res?: ServerResponse;
}

export function useHeldRequests(budget: ByteReservations): Plugin {
  /** Each request's holding, by the Request every hook of it sees. */
  const holdings = new WeakMap<Request, ByteHolding>();

  /** The HTTP request's holding: the server's, or (served by another server) one given back when the answer has left. */
  const httpHolding = ({ req, res }: HttpContext): ByteHolding | undefined => {
    const held = req && requestHolding(req);
    if (held || !res || typeof res.once !== 'function') return held;
    const own = budget.holding();
    res.once('close', () => own.release());
    return own;
  };

  /** A WebSocket operation's holding: given back when its request's signal aborts (the operation ended). */
  const operationHolding = (request: Request): ByteHolding => {
    const own = budget.holding();
    if (request.signal.aborted) own.release();
    else request.signal.addEventListener('abort', () => own.release(), { once: true });
    return own;
  };

  return {
    onParams({ request, params, context }) {
      // Read once, the body is not read again: what stays is its parsed parameters.
      forgetBody(request);
      const holding = httpHolding(context as HttpContext);
      if (!holding) return;
      if (!holding.resize(paramsHeapBytes(params))) throw memoryBudgetRefusal();
      holdings.set(request, holding);
    },
    onContextBuilding({ context }) {
      const { request, params } = context as { request?: Request; params?: GraphQLParams };
      if (!request || !params || holdings.has(request) || !(LIVE_SOCKET in context)) return;
      const holding = operationHolding(request);
      if (!holding.add(paramsHeapBytes(params))) {
        holding.release();
        throw memoryBudgetRefusal();
      }
      holdings.set(request, holding);
    },
    onSubscribe({ args }) {
      dropUndeclaredVariables(args.variableValues, args.document, args.operationName);
      const { request, params } = args.contextValue as { request?: Request; params?: GraphQLParams };
      const holding = request && holdings.get(request);
      if (!request || !holding) return;
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) return;
          const query = params?.query ?? '';
          const kept = SUBSCRIPTION_BYTES + paramsHeapBytes({ ...params, query: '' }) + parsedDocumentBytes(query, args.document);
          if (holding.resize(kept)) return;
          void result[Symbol.asyncIterator]().return?.();
          setResult({ errors: [memoryBudgetRefusal()] });
        },
      };
    },
  };
}
