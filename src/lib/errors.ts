/**
 * The contract's error codes, and the errors the gateway raises for them.
 * Nothing here knows GraphQL: src/gateway/yoga.ts turns a GatewayError into the error a client sees.
 */
export const ErrorCode = {
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  NOT_FOUND: 'NOT_FOUND',
  UPSTREAM_UNAUTHORIZED: 'UPSTREAM_UNAUTHORIZED',
  UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  UPSTREAM_INVALID_RESPONSE: 'UPSTREAM_INVALID_RESPONSE',
  UPSTREAM_NOT_CONFIGURED: 'UPSTREAM_NOT_CONFIGURED',
  RATE_LIMITED: 'RATE_LIMITED',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Every `extensions.code` a client may see: the codes above, GraphQL's own and the README's additions. */
export const CLIENT_ERROR_CODES: ReadonlySet<string> = new Set([
  ...Object.values(ErrorCode),
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_ONLY',
  'BAD_REQUEST',
  'INTERNAL_SERVER_ERROR',
  // A caller that went away (CallerGoneError): the code its result would carry, read by no one.
  'CANCELLED',
]);

export type UpstreamService = 'identity' | 'content-library';

/**
 * An error whose message is safe to show a client. `detail` is for the log only:
 * it may hold upstream URLs, statuses or validation issues, never secrets.
 */
export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'GatewayError';
  }
}

export class BadUserInputError extends GatewayError {
  constructor(message: string, detail?: Record<string, unknown>) {
    super(ErrorCode.BAD_USER_INPUT, message, detail);
    this.name = 'BadUserInputError';
  }
}

/** A failure talking to an upstream service, already mapped to one of the contract's codes. */
export class UpstreamError extends GatewayError {
  constructor(
    code: Extract<
      ErrorCode,
      | 'NOT_FOUND'
      | 'UPSTREAM_UNAUTHORIZED'
      | 'UPSTREAM_UNAVAILABLE'
      | 'UPSTREAM_INVALID_RESPONSE'
      | 'UPSTREAM_NOT_CONFIGURED'
    >,
    readonly service: UpstreamService,
    message: string,
    detail?: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(code, message, { service, ...detail }, options);
    this.name = 'UpstreamError';
  }
}

const loggedWhereRaised = new WeakSet<Error>();

/**
 * Marks an error as written to the log where it was raised, at its level (a live poller's give-up):
 * the error log of the request it reaches writes it no more.
 */
export function markLogged<E extends Error>(error: E): E {
  loggedWhereRaised.add(error);
  return error;
}

export function isMarkedLogged(error: unknown): boolean {
  return error instanceof Error && loggedWhereRaised.has(error);
}

/**
 * The caller went away (closed its connection, abandoned a stream, ended its operation), so the
 * work done for it stopped. No upstream failed and no one waits for the answer: logged at debug,
 * counted as `cancelled`, and carrying no `UPSTREAM_*` code.
 */
export class CallerGoneError extends Error {
  constructor(readonly detail?: Record<string, unknown>) {
    super('The caller went away before the answer was ready.');
    this.name = 'CallerGoneError';
  }
}
