/**
 * GraphQL over WebSocket (`graphql-transport-ws`, graphql-ws) on the HTTP server's port and path,
 * as Yoga's docs set it up: each operation runs through Yoga's envelop (the same parse limits,
 * validation, context, error masking). The caller is authenticated once per connection from
 * `connectionParams` (`x-api-key`, `authorization`) by running them through Yoga's own request
 * pipeline, so the checks are exactly those of HTTP; refused: close 4403, nothing reaches an upstream.
 * Each operation writes its own access line when it ends, and continues the trace the handshake
 * was given (`traceparent` in the params or the upgrade request's headers).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { getOperationAST, GraphQLError, type ExecutionArgs, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import type { ExecutionResult, SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RequestState } from './context.js';
import { LIVE_SOCKET, type LiveAudit } from './live/index.js';
import type { Logger } from './logger.js';
import { WebSocketOperationLog } from './plugins/logging.js';
import { requestIdOf, withRequestId } from './plugins/request-id.js';
import {
  ConnectionOperations,
  ExecutingOperations,
  neverAnswered,
  type ExecutionLimits,
  type Operation,
} from './websocket-operations.js';
import { errorMaskingFor } from './error-masking.js';
import type { GatewayYoga } from './yoga.js';

export interface WebSocketOptions {
  readonly yoga: GatewayYoga;
  readonly liveAudit: LiveAudit;
  readonly log: Logger;
  readonly maxPayloadBytes: number;
  /** Given each accepted connection's socket, and how to close it, before any of its messages is read. */
  readonly watchSocket?: (socket: Socket, close: (code: number, reason: string) => void) => void;
  /** How long close() lets subscriptions send `complete` before closing the sockets. */
  readonly completeGraceMs?: number;
  /** Operations executing at once (live streams not counted); the defaults: WEBSOCKET_EXECUTION_LIMITS. */
  readonly executionLimits?: ExecutionLimits;
}

/**
 * Beyond these, a subscribe message is refused with RATE_LIMITED: graphql-ws runs every message it
 * gets at once, and each operation holds its context and upstream calls until it is answered. Over
 * HTTP the connection cap bounds that; a WebSocket could otherwise start operations without end.
 */
export const WEBSOCKET_EXECUTION_LIMITS: ExecutionLimits = { perConnection: 64, total: 1024 };

export interface WebSockets {
  /** Ends every subscription (`complete`), then closes each socket with 1001. Idempotent. */
  close(): Promise<void>;
}

/** The connection params read as the HTTP headers of the same names: credentials and W3C trace context. */
const HEADER_PARAMS = new Set(['x-api-key', 'authorization', 'traceparent', 'tracestate']);
const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;
const MAX_PARAM_LENGTH = 8192;

/** Sets a header a caller sent, unless it is no header value at all (a line break, a wide character). */
function setIfValid(headers: Headers, name: string, value: unknown): void {
  if (typeof value !== 'string' || value.length > MAX_PARAM_LENGTH) return;
  try {
    headers.set(name, value);
  } catch {
    // Left out: the caller is refused as one that sent no such header.
  }
}

/**
 * The request the caller would have sent over HTTP with these connection params. Their names are
 * matched as header names are, whatever their case; trace context may also come with the upgrade
 * request's own headers, so a connection's operations continue the caller's trace.
 */
function requestOf(connectionParams: Record<string, unknown> | undefined, upgrade: IncomingMessage): Request {
  const headers = new Headers({ 'content-type': 'application/json', accept: 'application/json' });
  for (const [key, value] of Object.entries(connectionParams ?? {})) {
    const name = key.toLowerCase();
    if (HEADER_PARAMS.has(name)) setIfValid(headers, name, value);
  }
  for (const name of TRACE_HEADERS) if (!headers.has(name)) setIfValid(headers, name, upgrade.headers[name]);
  return new Request('http://gateway.internal/graphql', { method: 'POST', headers, body: '{"query":"{__typename}"}' });
}

/** A handshake's server context: `handshake` receives what the pipeline settled for it. */
type HandshakeContext = RequestState & { handshake?: RequestState };

/**
 * Yoga hands plugins a copy of the server context it is given, so a handshake cannot read what
 * they recorded there; this copies the request id and caller into the handshake's own record.
 */
export function useWebSocketHandshake(): Plugin<object, HandshakeContext> {
  return {
    onResponse({ serverContext }) {
      const { handshake, requestId, caller } = serverContext;
      if (handshake) Object.assign(handshake, { requestId, caller });
    },
  };
}

type Prepared = { execute: (args: ExecutionArgs) => unknown; stream?: AsyncIterable<ExecutionResult>; operation: Operation };

const withCode = (errors: readonly GraphQLError[], code: string) =>
  errors.map((error) =>
    error.extensions?.code ? error : new GraphQLError(error.message, { nodes: error.nodes, extensions: { ...error.extensions, code } }),
  );

/** An error as Yoga's HTTP answers write it: without the extensions Yoga keeps to itself (`http`, `unexpected`). */
function formatted(error: GraphQLError): GraphQLFormattedError {
  const { extensions, ...rest } = error.toJSON();
  const { http, unexpected, ...kept } = extensions ?? {};
  return Object.keys(kept).length > 0 ? { ...rest, extensions: kept } : rest;
}

/** A result with errors as Yoga's HTTP answers write it (undefined: graphql-ws writes it as it is). */
function formattedResult(result: ExecutionResult): FormattedExecutionResult | undefined {
  if (!result.errors?.length) return undefined;
  return { ...result, errors: (result.errors as readonly GraphQLError[]).map(formatted) };
}

export function attachWebSockets(server: Server, options: WebSocketOptions): WebSockets {
  const { yoga, log } = options;
  // HTTP's masking; its limit only words a body refusal, which a WebSocket message never gets (1009 instead).
  const maskError = errorMaskingFor(options.maxPayloadBytes);
  const wsServer = new WebSocketServer({ server, path: '/graphql', maxPayload: options.maxPayloadBytes });
  // Emitted as the handshake completes, in the same turn as the upgrade: no message is read before.
  const { watchSocket } = options;
  if (watchSocket) {
    wsServer.on('connection', (webSocket, request) =>
      watchSocket(request.socket as Socket, (code, reason) => webSocket.close(code, reason)),
    );
  }
  /** Per connection: the handshake's request, its id and the caller it admitted, and its socket. */
  const connections = new WeakMap<object, { request: Request; state: RequestState; socket: WebSocket }>();
  /** Each connection's operations: ended with their subscription, successor or socket; close() waits for them. */
  const operations = new Map<object, ConnectionOperations>();
  const executing = new ExecutingOperations(options.executionLimits ?? WEBSOCKET_EXECUTION_LIMITS);
  /** Each subscribe message's access line (graphql-ws's hooks name a message by its payload). */
  const accessLogs = new WeakMap<object, WebSocketOperationLog>();
  const writeAccessLog = (ctx: { extra: { socket: WebSocket } }, payload: object, refused = false) => {
    const { socket } = ctx.extra;
    const end = refused ? 'error' : socket.readyState === socket.OPEN ? 'complete' : 'socket closed';
    accessLogs.get(payload)?.write(log, connections.get(ctx)?.state ?? {}, end);
  };
  /**
   * An error a connection's client is sent, through the gateway's masking as over HTTP. As Yoga
   * does, its logger hears of every error the masking changed: the unexpected is logged there, once.
   */
  const masked = (ctx: object, error: unknown): GraphQLError => {
    const answer = maskError(error, 'Unexpected error.') as GraphQLError;
    if (answer !== error) withRequestId(requestIdOf(connections.get(ctx)?.state ?? {}), () => yoga.logger.error(error));
    return answer;
  };
  const operationsOf = (ctx: object) => {
    let ofConnection = operations.get(ctx);
    if (!ofConnection) operations.set(ctx, (ofConnection = new ConnectionOperations(executing)));
    return ofConnection;
  };

  /** The execution arguments of a subscribe message, or the errors that refuse it. */
  async function prepare(
    ctx: object,
    payload: SubscribePayload,
    operation: Operation,
    access: WebSocketOperationLog,
  ): Promise<ExecutionArgs | unknown[]> {
    const connection = connections.get(ctx);
    if (!connection) return [new GraphQLError('Not authenticated.', { extensions: { code: 'UNAUTHENTICATED' } })];
    // Every operation of the connection carries the handshake's request id and caller, and its
    // socket: closed should the client of a live subscription stop reading. Its request is its
    // own, with the operation's signal: aborted when the operation ends.
    const { url, method, headers } = connection.request;
    const enveloped = yoga.getEnveloped({
      ...connection.state,
      [LIVE_SOCKET]: connection.socket,
      request: new Request(url, { method, headers, signal: operation.signal }),
      params: payload,
    });
    let document;
    try {
      document = enveloped.parse(payload.query);
    } catch (error) {
      // A syntax error, a parse limit, no operation to run: the caller's. Anything else is masked as unexpected.
      return error instanceof GraphQLError ? withCode([error], 'GRAPHQL_PARSE_FAILED') : [error];
    }
    access.parsed(document, payload.operationName);
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length > 0) return withCode(errors, 'GRAPHQL_VALIDATION_FAILED');
    const args: ExecutionArgs = {
      schema: enveloped.schema,
      document,
      operationName: payload.operationName ?? null,
      variableValues: payload.variables ?? null,
      contextValue: await enveloped.contextFactory(),
      rootValue: { execute: enveloped.execute, operation } satisfies Prepared,
    };
    if (getOperationAST(document, payload.operationName)?.operation !== 'subscription') return args;
    // The client completed it, or the socket closed, meanwhile: no stream to start.
    if (operation.ended) return [new GraphQLError('The subscription was completed.')];
    // Subscribed here, so that a refusal (limit, bad arguments) is this subscription's `error` message.
    const result = (await enveloped.subscribe(args)) as ExecutionResult | AsyncIterable<ExecutionResult>;
    if (!isAsyncIterable(result)) return withCode((result.errors ?? []) as GraphQLError[], 'INTERNAL_SERVER_ERROR');
    operation.attach(result);
    (args.rootValue as Prepared).stream = result;
    return args;
  }

  const disposable = useServer<Record<string, unknown>>(
    {
      execute: (args) => (args.rootValue as Prepared).execute(args) as never,
      subscribe: (args) => (args.rootValue as Prepared).stream as never,
      onConnect: async (ctx) => {
        const request = requestOf(ctx.connectionParams, ctx.extra.request);
        const state: RequestState = {};
        const response = await yoga.fetch(request, { handshake: state } satisfies HandshakeContext);
        await response.arrayBuffer();
        if (response.status === 401 || response.status === 403) {
          const refusal = { status: response.status, requestId: state.requestId };
          log.info(refusal, 'websocket connection refused: caller not authenticated');
          return false;
        }
        connections.set(ctx, { request, state, socket: ctx.extra.socket });
        closeAtExpiry(ctx.extra.socket, state.caller?.expiresAt);
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        // Before any await: a newer subscribe of this id must find this one.
        const ofConnection = operationsOf(ctx);
        const refusal = ofConnection.executionRefusal;
        const operation = ofConnection.start(id, payload);
        const access = new WebSocketOperationLog(id);
        accessLogs.set(payload, access);
        const answer = refusal
          ? [new GraphQLError(refusal, { extensions: { code: 'RATE_LIMITED' } })]
          : await prepare(ctx, payload, operation, access).catch((error: unknown) => [error]);
        if (operation.superseded) {
          writeAccessLog(ctx, payload);
          return neverAnswered();
        }
        if (!Array.isArray(answer)) return answer;
        if (operation.ended) {
          // Its socket closed while it was prepared: there is nobody to answer, and nothing was refused.
          writeAccessLog(ctx, payload);
          return neverAnswered();
        }
        // A refusal is sent as `error`; graphql-ws completes nothing for it.
        const errors = answer.map((error) => masked(ctx, error));
        ofConnection.forget(id, operation);
        access.sent(errors);
        writeAccessLog(ctx, payload, true);
        return errors;
      },
      onNext: (_ctx, _id, payload, _args, result) => {
        accessLogs.get(payload)?.sent(result.errors);
        return formattedResult(result);
      },
      // Every `error` message: refusals (masked already), a stream that failed, graphql-ws's own.
      onError: (ctx, _id, payload, errors) => {
        const sent = errors.map((error) => masked(ctx, error));
        accessLogs.get(payload)?.sent(sent);
        return sent.map(formatted);
      },
      // The last step before graphql-ws files the stream (or result) under its id.
      onOperation: (_ctx, _id, _payload, args) => ((args.rootValue as Prepared).operation.superseded ? neverAnswered() : undefined),
      onComplete: (ctx, id, payload) => {
        writeAccessLog(ctx, payload);
        return operations.get(ctx)?.complete(id, payload);
      },
      onClose: (ctx) => {
        operations.get(ctx)?.endAll();
        operations.delete(ctx);
      },
    },
    wsServer,
  );

  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        options.liveAudit.close();
        const graceMs = options.completeGraceMs ?? 1000;
        const deadline = Date.now() + graceMs;
        const pending = () => [...operations.values()].some((ofConnection) => ofConnection.streaming > 0);
        while (pending() && Date.now() < deadline) await sleep(10);
        // Close frames (1001) go out now; a client that never answers its close is cut off, so
        // that it cannot hold the HTTP server's drain open.
        const disposed = Promise.resolve(disposable.dispose()).catch((error: unknown) =>
          log.warn({ err: error }, 'websocket server did not close cleanly'),
        );
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([disposed, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
        clearTimeout(timer);
        for (const socket of wsServer.clients) socket.terminate();
      })();
      return closing;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Node's timers hold at most this long (about 24.8 days); a later expiry is waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;
/** As a refused handshake is closed: clients that reconnect with fresh connection params get in again. */
const FORBIDDEN = 4403;
const EXPIRED_CLOSE_GRACE_MS = 1000;

/**
 * A connection admitted by a token lasts as long as the token: at its expiry the socket is closed
 * with 4403, and its subscriptions end with it, so a token that is no longer valid runs nothing more.
 */
function closeAtExpiry(socket: WebSocket, expiresAt: number | undefined): void {
  if (expiresAt === undefined) return;
  let timer: NodeJS.Timeout;
  const check = () => {
    const left = expiresAt - Date.now();
    if (left > 0) timer = setTimeout(check, Math.min(left, LONGEST_TIMER_MS)).unref();
    else {
      socket.close(FORBIDDEN, 'The token has expired; connect again with a new one.');
      // A client that never answers the close frame does not keep its subscriptions for ws's 30 s.
      timer = setTimeout(() => socket.terminate(), EXPIRED_CLOSE_GRACE_MS).unref();
    }
  };
  check();
  socket.once('close', () => clearTimeout(timer));
}
