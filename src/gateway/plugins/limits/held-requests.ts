/** What a parsed request holds counts in the memory budget until it ends (over HTTP, in its body's share): past it, a 503. */
import type { ServerResponse } from 'node:http';
import type { DocumentNode } from 'graphql';
import { createGraphQLError, isAsyncIterable, type GraphQLParams, type Plugin } from 'graphql-yoga';
import type { ByteHolding, ByteReservations } from '../../../lib/byte-reservations.js';
import { LIVE_SOCKET } from '../../../audit/live/index.js';
import { HeapEstimate } from '../../../audit/live/heap-estimate.js';
import { analysisOf } from './document-analysis.js';
import { parsedDocumentBytes } from './parse-cache.js';

const memoryBudgetRefusal = () =>
  createGraphQLError('The gateway holds too many requests at once; retry later.', {
    extensions: { code: 'RATE_LIMITED', http: { status: 503, headers: { 'retry-after': '1' } } },
  });

/** The heap a request's parsed parameters take, by the estimate live records are weighed with. */
const paramsHeapBytes = (params: Partial<GraphQLParams>): number => new HeapEstimate().valueBytes(params);

/** Drops, in place, the variables the operation does not declare: every copy of the request shares the object. */
function dropUndeclaredVariables(variables: unknown, declared: ReadonlySet<string> | undefined): void {
  if (typeof variables !== 'object' || variables === null) return;
  for (const name of Object.keys(variables)) if (!declared?.has(name)) delete (variables as Record<string, unknown>)[name];
}

/** Where @whatwg-node/node-fetch caches a body once read. */
const BODY_CACHES = ['_chunks', '_buffer', '_text', '_json'] as const;

/** A subscription's request lives as long as it: its body goes, the chunks emptied in place (the Node request's listener holds them). */
function forgetBody(request: object): void {
  const cached = request as Partial<Record<(typeof BODY_CACHES)[number], unknown>>;
  if (Array.isArray(cached._chunks)) cached._chunks.length = 0;
  for (const field of BODY_CACHES) if (cached[field] != null) cached[field] = null;
}

/** Over HTTP, the server's response carries the request's share of the memory budget (server/http-server.ts). */
type HttpContext = { readonly res?: ServerResponse & { readonly holding?: ByteHolding } };

/** Calls `ended` once the request is over: its answer has left (HTTP), or its operation ended (WebSocket). */
function whenOver(request: Request, { res }: HttpContext, ended: () => void): void {
  if (res && typeof res.once === 'function') {
    if (res.closed) ended();
    else res.once('close', ended);
  } else if (request.signal.aborted) ended();
  else request.signal.addEventListener('abort', ended, { once: true });
}

/** graphql-ws keeps a subscribe message, parsed and as text, in the frame that awaits its subscription. */
const WEBSOCKET_MESSAGE_COPIES = 2;

export function useHeldRequests(budget: ByteReservations): Plugin {
  const holdings = new WeakMap<Request, ByteHolding>();
  const messageBytes = new WeakMap<Request, number>();
  /** Documents open subscriptions hold (the parse cache may have let them go). */
  const documents = new Map<DocumentNode, { holders: number; holding: ByteHolding }>();

  const holdDocument = (document: DocumentNode, query: string): (() => void) | undefined => {
    let held = documents.get(document);
    if (!held) {
      const holding = budget.holding();
      if (!holding.add(parsedDocumentBytes(query, document))) return undefined;
      documents.set(document, (held = { holders: 0, holding }));
    }
    held.holders++;
    const entry = held;
    return () => {
      if (--entry.holders > 0) return;
      entry.holding.release();
      documents.delete(document);
    };
  };

  /** A holding given back once the request is over (the server's, for an HTTP request it admitted). */
  const holdingFor = (request: Request, context: HttpContext): ByteHolding => {
    const held = context.res?.holding;
    if (held) return held;
    const own = budget.holding();
    whenOver(request, context, () => own.release());
    return own;
  };

  return {
    onParams({ request, params, context }) {
      forgetBody(request);
      const { res } = context as HttpContext;
      // Only a request with a connection is counted: yoga.fetch in-process has no end to give it back at.
      if (!res) return;
      const holding = holdingFor(request, { res });
      if (!holding.resize(paramsHeapBytes(params))) throw memoryBudgetRefusal();
      holdings.set(request, holding);
    },
    onContextBuilding({ context }) {
      const { request, params } = context as { request?: Request; params?: GraphQLParams };
      if (!request || !params || holdings.has(request) || !(LIVE_SOCKET in context)) return;
      const holding = holdingFor(request, {});
      const bytes = paramsHeapBytes(params);
      if (!holding.add(bytes)) throw memoryBudgetRefusal();
      holdings.set(request, holding);
      messageBytes.set(request, bytes);
    },
    onSubscribe({ args }) {
      dropUndeclaredVariables(args.variableValues, analysisOf(args.document, args.operationName)?.declaredVariables);
      const context = args.contextValue as HttpContext & { request?: Request; params?: GraphQLParams };
      const { request, params } = context;
      const holding = request && holdings.get(request);
      if (!request || !holding) return;
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) return;
          const releaseDocument = holdDocument(args.document, params?.query ?? '');
          const kept = paramsHeapBytes({ ...params, query: '' }) + WEBSOCKET_MESSAGE_COPIES * (messageBytes.get(request) ?? 0);
          if (releaseDocument && holding.resize(kept)) return whenOver(request, context, releaseDocument);
          releaseDocument?.();
          void result[Symbol.asyncIterator]().return?.();
          setResult({ errors: [memoryBudgetRefusal()] });
        },
      };
    },
  };
}
