/** The contract's error codes and the errors raised for them; src/gateway/error-masking.ts shows them to clients. */
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

/** An error whose message is safe to show a client; `detail` (never secrets) is for the log only. */
export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: Record<string, unknown>,
  ) {
    super(message);
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
    code: Exclude<ErrorCode, 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'RATE_LIMITED'>,
    readonly service: UpstreamService,
    message: string,
    detail?: Record<string, unknown>,
  ) {
    super(code, message, { service, ...detail });
    this.name = 'UpstreamError';
  }
}

const loggedWhereRaised = new WeakSet<Error>();

/** Marks an error as logged where it was raised (a live poller's give-up): the request's error log skips it. */
export function markLogged<E extends Error>(error: E): E {
  loggedWhereRaised.add(error);
  return error;
}

export function isMarkedLogged(error: unknown): boolean {
  return error instanceof Error && loggedWhereRaised.has(error);
}

/** The caller went away, so the work for it stopped: no upstream failed. Logged at debug, counted as `cancelled`. */
export class CallerGoneError extends Error {
  constructor(readonly detail?: Record<string, unknown>) {
    super('The caller went away before the answer was ready.');
    this.name = 'CallerGoneError';
  }
}
