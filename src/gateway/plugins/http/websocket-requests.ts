/** The Yoga side of GraphQL over WebSocket (src/server/websocket/): each operation is a request to Yoga. */
import type { DocumentNode } from 'graphql';
import type { ExecutionResult } from 'graphql-ws';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { RequestState } from '../../context.js';

/** What one operation's request learns on its way through Yoga, for the socket to answer with. */
export interface OperationExchange {
  readonly access: { parsed(document: DocumentNode, operationName: string | null | undefined): void };
  /** Keeps a stream the moment it starts: ended at once if the operation ended meanwhile. */
  readonly operation: { attach(stream: AsyncIterable<ExecutionResult>): void };
  /** Execution (not subscription) began: its result is the operation's `next`, errors or not. */
  executed: boolean;
  answer?: ExecutionResult | AsyncIterable<ExecutionResult>;
}

/** The server context of a request run for a WebSocket: its handshake, or one of its operations. */
export type WebSocketServerContext = RequestState & { handshake?: RequestState; websocketOperation?: OperationExchange };

const exchangeOf = (context: unknown) => (context as WebSocketServerContext | undefined)?.websocketOperation;

/** Hands back into the record given with each request (plugins see a copy of the server context) what it settles. */
export function useWebSocketRequests(): Plugin<object, WebSocketServerContext> {
  return {
    onParse({ context }) {
      const exchange = exchangeOf(context);
      if (!exchange) return;
      const { params } = context as { params?: { operationName?: string | null } };
      return ({ result }) => {
        if (!(result instanceof Error)) exchange.access.parsed(result, params?.operationName);
      };
    },
    onExecute({ args }) {
      const exchange = exchangeOf(args.contextValue);
      if (exchange) exchange.executed = true;
    },
    onResultProcess({ serverContext, setResultProcessor }) {
      const exchange = exchangeOf(serverContext);
      if (!exchange) return;
      setResultProcessor((result) => {
        exchange.answer = result as OperationExchange['answer'];
        if (isAsyncIterable(result)) exchange.operation.attach(result);
        // 200: the hooks after this one take any other status for an answer that was refused.
        return new Response(null, { status: 200 });
      }, 'application/json');
    },
    onResponse({ serverContext }) {
      const { handshake, requestId, caller } = serverContext;
      if (handshake) Object.assign(handshake, { requestId, caller });
    },
  };
}
