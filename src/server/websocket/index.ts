/** GraphQL over WebSocket: each handshake and operation runs through yoga.fetch as the POST the client would have sent. */
import type { IncomingMessage, Server } from 'node:http';
import { GraphQLError, parse, type ExecutionArgs, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import type { ExecutionResult, SubscribePayload } from 'graphql-ws';
import { isAsyncIterable } from 'graphql-yoga';
import type { WebSocket } from 'ws';
import type { RequestState } from '../../gateway/context.js';
import { LIVE_SOCKET, type LiveAudit } from '../../audit/live/index.js';
import { WebSocketOperationLog } from '../../gateway/plugins/observability/logging.js';
import type { OperationExchange, WebSocketServerContext } from '../../gateway/plugins/http/websocket-requests.js';
import { schema } from '../../gateway/schema/index.js';
import { ConnectionOperations, neverAnswered, type ExecutionLimits, type Operation } from './operations.js';
import { serveGraphqlWs, type BindingOptions, type SocketExtra } from '../compat/graphql-ws-binding.js';
import type { GatewayYoga } from '../../gateway/yoga.js';

interface WebSocketOptions extends BindingOptions {
  readonly yoga: GatewayYoga;
  readonly liveAudit: LiveAudit;
  /** Past these a subscribe is refused RATE_LIMITED: graphql-ws runs every message at once, unseen by the connection cap. */
  readonly executionLimits?: ExecutionLimits;
  readonly connectionInitWaitTimeout?: number;
}

const EXECUTION_LIMITS: ExecutionLimits = { perConnection: 64, total: 1024 };

export type WebSockets = ReturnType<typeof attachWebSockets>;

/** The connection params read as the HTTP headers of the same names: credentials and W3C trace context. */
const HEADER_PARAMS = new Set(['x-api-key', 'authorization', 'traceparent', 'tracestate']);
const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;
const MAX_PARAM_LENGTH = 8192;
const GRAPHQL_URL = 'http://gateway.internal/graphql';
const COMPLETE_GRACE_MS = 1000;
/** As a refused handshake is closed: clients that reconnect with fresh connection params get in again. */
const FORBIDDEN = 4403;
/** Node's timers hold at most this long; a later expiry is waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Sets a header a caller sent, unless it is no header value (then the caller is refused as one without it). */
function setIfValid(headers: Headers, name: string, value: unknown): void {
  if (typeof value !== 'string' || value.length > MAX_PARAM_LENGTH) return;
  try {
    headers.set(name, value);
  } catch {
    // Left out.
  }
}

/** The headers the caller would have sent over HTTP; trace context also from the upgrade. */
function headersOf(connectionParams: Record<string, unknown> | undefined, upgrade: IncomingMessage): Headers {
  const headers = new Headers({ 'content-type': 'application/json', accept: 'application/graphql-response+json, text/event-stream' });
  for (const [key, value] of Object.entries(connectionParams ?? {})) {
    const name = key.toLowerCase();
    if (HEADER_PARAMS.has(name)) setIfValid(headers, name, value);
  }
  for (const name of TRACE_HEADERS) if (!headers.has(name)) setIfValid(headers, name, upgrade.headers[name]);
  return headers;
}

/** graphql-ws looks for an operation in the document before it runs; the answer is settled by then (Prepared). */
const SETTLED = parse('{ __typename }');

type Prepared = { answer: ExecutionResult | AsyncIterable<ExecutionResult>; operation: Operation };

/** An error as Yoga's HTTP answers write it: without the extensions Yoga keeps to itself. */
function formatted(error: GraphQLError): GraphQLFormattedError {
  const { extensions, ...rest } = error.toJSON();
  const { http, unexpected, ...kept } = extensions ?? {};
  return Object.keys(kept).length > 0 ? { ...rest, extensions: kept } : rest;
}

/** graphql-ws sends `error` only for GraphQLError instances; a plugin may have set a plain one. */
const asGraphQLError = (error: GraphQLFormattedError | GraphQLError) =>
  error instanceof GraphQLError ? error : new GraphQLError(error.message, { extensions: error.extensions });

const unexpectedError = () => new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } });

/** The errors of an answer Yoga wrote out before any result was taken (a refusal before the request was parsed). */
async function errorsOfResponse(response: Response): Promise<GraphQLError[]> {
  const body = (await response.json().catch(() => undefined)) as { errors?: GraphQLFormattedError[] } | undefined;
  const errors = body?.errors?.map(asGraphQLError);
  return errors?.length ? errors : [unexpectedError()];
}

export function attachWebSockets(server: Server, options: WebSocketOptions) {
  const { yoga, log } = options;
  const connections = new WeakMap<WebSocket, { headers: Headers; state: RequestState; operations: ConnectionOperations }>();
  const connectionOf = (ctx: { extra: SocketExtra }) => connections.get(ctx.extra.socket);
  const executing = { executing: 0 };
  // graphql-ws's hooks name a subscribe message by its payload.
  const accessLogs = new WeakMap<object, WebSocketOperationLog>();
  const writeAccessLog = (ctx: { extra: SocketExtra }, payload: object, refused = false) => {
    const { socket } = ctx.extra;
    const end = refused ? 'error' : socket.readyState === socket.OPEN ? 'complete' : 'socket closed';
    accessLogs.get(payload)?.write(log, connectionOf(ctx)?.state ?? {}, end);
  };

  /** Runs a subscribe message as the HTTP request it stands for: its execution arguments, or the errors that refuse it. */
  async function run(ctx: { extra: SocketExtra }, payload: SubscribePayload, operation: Operation, access: WebSocketOperationLog) {
    const connection = connectionOf(ctx)!;
    const exchange: OperationExchange = { access, operation, executed: false };
    const request = new Request(GRAPHQL_URL, { method: 'POST', headers: connection.headers, body: JSON.stringify(payload), signal: operation.signal });
    const serverContext = { websocketOperation: exchange, [LIVE_SOCKET]: ctx.extra.queue } as WebSocketServerContext;
    // An aborted request's fetch rejects at once while Yoga finishes; a stream it then starts is ended by Operation.attach.
    const response = await Promise.resolve(yoga.fetch(request, serverContext)).catch((error: unknown) => {
      if (operation.ended) return undefined;
      throw error;
    });
    const { answer } = exchange;
    if (!response) return [];
    if (answer === undefined) return errorsOfResponse(response);
    // A request refused, or a subscription that did not start: an `error` message, as graphql-ws sends for them.
    if (!isAsyncIterable(answer) && !exchange.executed && answer.errors?.length) return answer.errors.map(asGraphQLError);
    return { schema, document: SETTLED, rootValue: { answer, operation } satisfies Prepared } satisfies ExecutionArgs;
  }

  const settledAnswer = (args: ExecutionArgs) => (args.rootValue as Prepared).answer as never;
  const wsServer = serveGraphqlWs(server, options, {
    connectionInitWaitTimeout: options.connectionInitWaitTimeout,
    execute: settledAnswer,
    subscribe: settledAnswer,
    onConnect: async (ctx) => {
      const headers = headersOf(ctx.connectionParams, ctx.extra.request);
      const state: RequestState = {};
      const request = new Request(GRAPHQL_URL, { method: 'POST', headers, body: '{"query":"{__typename}"}' });
      const response = await yoga.fetch(request, { handshake: state } satisfies WebSocketServerContext);
      await response.arrayBuffer();
      if (response.status === 401 || response.status === 403) {
        log.info({ status: response.status, requestId: state.requestId }, 'websocket connection refused: caller not authenticated');
        return false;
      }
      // Its operations carry the handshake's request id: their log lines name the connection.
      if (state.requestId) headers.set('x-request-id', state.requestId);
      const operations = new ConnectionOperations(options.executionLimits ?? EXECUTION_LIMITS, executing);
      connections.set(ctx.extra.socket, { headers, state, operations });
      closeAtExpiry(ctx.extra.socket, state.caller?.expiresAt);
      return true;
    },
    onSubscribe: async (ctx, id, payload) => {
      // Before any await: a newer subscribe of this id must find this one.
      const ofConnection = connectionOf(ctx)!.operations;
      const refusal = ofConnection.executionRefusal;
      const operation = ofConnection.start(id, payload);
      const access = new WebSocketOperationLog(id);
      accessLogs.set(payload, access);
      const answer = refusal
        ? [new GraphQLError(refusal, { extensions: { code: 'RATE_LIMITED' } })]
        : await run(ctx, payload, operation, access).catch((error: unknown) => {
            log.error({ err: error, requestId: connectionOf(ctx)?.state.requestId }, 'unexpected error');
            return [unexpectedError()];
          });
      if (operation.superseded || (Array.isArray(answer) && operation.ended)) {
        // Superseded, or its socket closed while it was refused: nobody to answer.
        writeAccessLog(ctx, payload);
        return neverAnswered();
      }
      if (!Array.isArray(answer)) return answer;
      // A refusal is sent as `error`; graphql-ws completes nothing for it.
      ofConnection.forget(id, operation);
      access.sent(answer.map(formatted));
      writeAccessLog(ctx, payload, true);
      return answer;
    },
    onNext: (_ctx, _id, payload, _args, result) => {
      if (!result.errors?.length) return undefined;
      const answer: FormattedExecutionResult = { ...result, errors: (result.errors as readonly GraphQLError[]).map(formatted) };
      accessLogs.get(payload)?.sent(answer.errors);
      return answer;
    },
    onError: (_ctx, _id, payload, errors) => {
      const sent = errors.map(formatted);
      accessLogs.get(payload)?.sent(sent);
      return sent;
    },
    // The last step before graphql-ws files the stream (or result) under its id.
    onOperation: (_ctx, _id, _payload, args) => ((args.rootValue as Prepared).operation.superseded ? neverAnswered() : undefined),
    onComplete: (ctx, id, payload) => {
      writeAccessLog(ctx, payload);
      return connectionOf(ctx)?.operations.complete(id, payload);
    },
    onClose: (ctx) => connectionOf(ctx)?.operations.endAll(),
  });

  let closing: Promise<void> | undefined;
  return {
    /** Ends every subscription (`complete`), then closes each socket with 1001. */
    close(): Promise<void> {
      closing ??= (async () => {
        options.liveAudit.close();
        const deadline = Date.now() + COMPLETE_GRACE_MS;
        const pending = () => [...wsServer.clients].some((socket) => connections.get(socket)?.operations.streaming);
        while (pending() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        // Close frames (1001) go out now; a client that never answers its close is cut off by the binding.
        for (const socket of wsServer.clients) socket.close(1001, 'Going away');
        await new Promise<void>((resolve) => wsServer.close(() => resolve()));
      })();
      return closing;
    },
  };
}

/** A connection admitted by a token lasts as long as the token: at its expiry it is closed with 4403. */
function closeAtExpiry(socket: WebSocket, expiresAt: number | undefined): void {
  if (expiresAt === undefined) return;
  let timer: NodeJS.Timeout;
  const check = () => {
    const left = expiresAt - Date.now();
    if (left > 0) timer = setTimeout(check, Math.min(left, LONGEST_TIMER_MS)).unref();
    else socket.close(FORBIDDEN, 'The token has expired; connect again with a new one.');
  };
  check();
  socket.once('close', () => clearTimeout(timer));
}
