/** One access line per request and per WebSocket operation; each error logged once, only the unexpected at `error`. */
import { getOperationAST, GraphQLError, type DocumentNode } from 'graphql';
import { isAsyncIterable, type Plugin, type YogaLogger } from 'graphql-yoga';
import type { GatewayContext, RequestState } from '../../context.js';
import { CallerGoneError, ErrorCode, GatewayError, isMarkedLogged } from '../../../lib/errors.js';
import type { Logger } from '../../../lib/logger.js';
import { callerOf } from '../auth/caller-auth.js';
import { currentRequestId, requestIdOf } from '../http/request-id.js';
import { isVariableValueError } from '../../error-masking.js';

const CALLER_MISTAKES = new Set<string>([ErrorCode.BAD_USER_INPUT, ErrorCode.UNAUTHENTICATED, ErrorCode.NOT_FOUND]);
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,127}$/;
const MAX_LOGGED_PATH = 256;
const MAX_LOGGED_CODES = 8;
const MAX_LOGGED_ID = 64;
const CLIENT_CLOSED_REQUEST = 499;
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

/** The caller's W3C trace id, so the access line joins the caller's trace even without tracing on. */
function traceIdOf(request: Request): string | undefined {
  const traceId = TRACEPARENT.exec(request.headers.get('traceparent')?.trim().toLowerCase() ?? '')?.[1];
  return traceId && !/^0+$/.test(traceId) ? traceId : undefined;
}

/** Errors already written, so that Yoga's own report of them stays at debug. */
export type LoggedErrors = WeakSet<object>;

function originalOf(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError && current.originalError) current = current.originalError;
  return current;
}

export function logFieldError(log: Logger, error: unknown, logged: LoggedErrors): void {
  // The access line carries its BAD_USER_INPUT, as for any caller mistake without detail to add.
  if (isVariableValueError(error)) return;
  const original = originalOf(error);
  if (!(original instanceof Error) || original === error || logged.has(original)) return;
  logged.add(original);
  if (isMarkedLogged(original)) return;
  const path = error instanceof GraphQLError ? error.path : undefined;
  if (original instanceof CallerGoneError) {
    log.debug({ path, detail: original.detail }, original.message);
  } else if (original instanceof GatewayError) {
    // A failed upstream call (its detail names the route) was logged by the call itself.
    const loggedByCall = original.detail !== undefined && 'route' in original.detail;
    const level = loggedByCall ? 'debug' : CALLER_MISTAKES.has(original.code) ? 'info' : 'warn';
    log[level]({ code: original.code, path, detail: original.detail }, original.message);
  } else {
    log.error({ err: original, path }, 'unexpected resolver error');
  }
}

export function useErrorLog(logged: LoggedErrors): Plugin<GatewayContext> {
  const logAll = (log: Logger, errors: readonly unknown[] | undefined) => {
    for (const error of errors ?? []) logFieldError(log, error, logged);
  };
  return {
    onExecute: () => ({
      onExecuteDone: ({ args, result }) => {
        if ('errors' in result) logAll(args.contextValue.log, result.errors);
      },
    }),
    onSubscribe: () => ({
      onSubscribeResult: ({ args, result }) => {
        if (!isAsyncIterable(result)) return logAll(args.contextValue.log, result.errors);
        return { onNext: ({ result: event }) => logAll(args.contextValue.log, event.errors) };
      },
    }),
  };
}

/** A caller's mistake Yoga reports: request-phase errors it raised itself, with a status below 500. */
function isCallerMistake(error: unknown): boolean {
  if (!(error instanceof GraphQLError)) return false;
  const status = (error.extensions?.http as { status?: number } | undefined)?.status;
  return error.originalError === undefined || (status !== undefined && status < 500);
}

const describe = (value: unknown) =>
  value instanceof Error ? `${value.name}: ${value.message}` : typeof value === 'string' ? value : JSON.stringify(value);

/** Yoga's logger: warnings lose their stacks; `error` only for the unexpected not already logged (Yoga reports every error it masks). */
export function yogaLogger(log: Logger, logged: LoggedErrors): YogaLogger {
  const base = log.child({ component: 'yoga' });
  // Outside a request's scope the id is undefined, and JSON leaves it out.
  const scoped = () => ({ requestId: currentRequestId() });
  // Yoga writes a few debug lines per request: their text is built only when they are written.
  const write = (level: 'debug' | 'info' | 'warn', args: unknown[]) => {
    if (base.isLevelEnabled(level)) base[level](scoped(), args.map(describe).join(' '));
  };
  return {
    debug: (...args) => write('debug', args),
    info: (...args) => write('info', args),
    warn: (...args) => write('warn', args),
    error: (...args) => {
      const [error] = args;
      const original = originalOf(error);
      const known = typeof original === 'object' && original !== null && logged.has(original);
      const quiet = isCallerMistake(error) || known || isMarkedLogged(original) || original instanceof CallerGoneError;
      if (quiet) return write('debug', args);
      if (typeof original === 'object' && original !== null) logged.add(original);
      base.error({ ...scoped(), err: original }, 'unexpected error');
    },
  };
}

type ErrorsWithCodes = readonly { extensions?: Record<string, unknown> }[];

function addCodes(codes: Set<string>, errors: ErrorsWithCodes): Set<string> {
  for (const error of errors) {
    if (codes.size >= MAX_LOGGED_CODES) break;
    codes.add(String(error.extensions?.code ?? 'UNKNOWN'));
  }
  return codes;
}

const nameOf = (name: string | undefined | null) => (name ? (GRAPHQL_NAME.test(name) ? name : '(unreadable name)') : undefined);
const millisecondsSince = (started: number) => Math.round((performance.now() - started) * 10) / 10;

export function useAccessLog(parent: Logger): Plugin<object, RequestState> {
  const records = new WeakMap<Request, { started: number; path: string; operationName?: string; codes?: string[] }>();
  // No redaction (every value matched against every wildcard path): the line's fixed keys name no credential.
  const log = parent.child({}, { redact: [] });
  return {
    onRequest({ request, url }) {
      records.set(request, { started: performance.now(), path: url.pathname });
    },
    onParse: ({ context }) => {
      const { request, params } = context as { request: Request; params?: { operationName?: string | null } };
      const record = records.get(request);
      return ({ result }) => {
        if (!record || result instanceof Error) return;
        record.operationName = nameOf(getOperationAST(result, params?.operationName ?? undefined)?.name?.value);
      };
    },
    onResultProcess({ request, result }) {
      const record = records.get(request);
      const errors = Array.isArray(result) ? result.flatMap((r) => r.errors ?? []) : 'errors' in result ? result.errors : undefined;
      if (!record || !errors?.length) return;
      record.codes = [...addCodes(new Set(), errors)];
    },
    onResponse({ request, response, serverContext }) {
      // An operation over a WebSocket writes its own line when it ends (WebSocketOperationLog).
      if ('websocketOperation' in serverContext) return;
      const record = records.get(request);
      const path = record?.path ?? new URL(request.url).pathname;
      const level = PROBES.has(path) ? 'debug' : 'info';
      if (!log.isLevelEnabled(level)) return;
      const traceId = traceIdOf(request);
      const entry = {
        requestId: requestIdOf(serverContext),
        method: request.method.slice(0, 16),
        path: path.slice(0, MAX_LOGGED_PATH),
        // A client gone before its answer: 499, as a proxy logs it; a refusal already decided keeps its status.
        status: request.signal.aborted && response.status < 400 ? CLIENT_CLOSED_REQUEST : response.status,
        durationMs: record ? millisecondsSince(record.started) : undefined,
        operationName: record?.operationName,
        caller: callerOf(serverContext).id,
        ...(record?.codes ? { errors: record.codes } : {}),
        // The request a WebSocket connection's handshake runs (src/server/websocket/index.ts).
        ...('handshake' in serverContext ? { websocket: 'handshake' } : {}),
        ...(traceId ? { trace_id: traceId } : {}),
      };
      log[level](entry, 'request');
    },
  };
}

/** The access line of one operation over a WebSocket, written once when it ends, with its handshake's request id and caller. */
export class WebSocketOperationLog {
  readonly #started = performance.now();
  #operation: ReturnType<typeof getOperationAST> = null;
  readonly #codes = new Set<string>();
  #written = false;

  constructor(private readonly id: string) {}

  parsed(document: DocumentNode, operationName: string | null | undefined): void {
    this.#operation = getOperationAST(document, operationName ?? undefined);
  }

  /** Errors sent to the client: in a result, or as the `error` message that refused the operation. */
  sent(errors: ErrorsWithCodes | undefined): void {
    if (errors) addCodes(this.#codes, errors);
  }

  write(log: Logger, connection: RequestState, end: 'complete' | 'error' | 'socket closed'): void {
    if (this.#written) return;
    this.#written = true;
    if (!log.isLevelEnabled('info')) return;
    log.info(
      {
        requestId: connection.requestId,
        operationId: this.id.slice(0, MAX_LOGGED_ID),
        operationName: nameOf(this.#operation?.name?.value),
        operationType: this.#operation?.operation,
        durationMs: millisecondsSince(this.#started),
        caller: callerOf(connection).id,
        end,
        ...(this.#codes.size ? { errors: [...this.#codes] } : {}),
      },
      'websocket operation',
    );
  }
}
