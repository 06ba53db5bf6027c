/** Where what an upstream did becomes an UpstreamError: a message for clients (no URL, secret, body), `detail` for logs. */
import type { z } from 'zod';
import { CallerGoneError, UpstreamError, type UpstreamService } from '../lib/errors.js';
import { abortCauseOf } from './deadline.js';
import { errorCodeOf } from './retry.js';

const serviceNames: Record<UpstreamService, string> = {
  identity: 'The identity service',
  'content-library': 'The content library service',
};

export interface RefusalMapping {
  readonly route: string;
  /** A token grant or session login: a 400 refuses the credentials, and the POST is retried like a GET. */
  readonly credentialRoute?: boolean;
  readonly notFoundMessage?: string;
  /** The error type that makes a 404 "not found"; without it a 404 is an unknown path (a wrong base URL). */
  readonly notFoundType?: RegExp;
}

/** `path`: the full request path, named in the log when a 404 says it is unknown upstream. */
export function errorForStatus(
  service: UpstreamService,
  status: number,
  request: RefusalMapping,
  path: string,
  upstreamError: string | undefined,
): UpstreamError {
  const name = serviceNames[service];
  const unknownPath = status === 404 && request.notFoundType !== undefined && !request.notFoundType.test(upstreamError ?? '');
  const detail = {
    route: request.route,
    ...(upstreamError ? { upstreamError } : {}),
    ...(unknownPath ? { problem: `no such path upstream: ${path} (check the base URL and vendor)` } : {}),
    status,
  };
  if (status === 401 || status === 403 || (status === 400 && request.credentialRoute)) {
    return new UpstreamError('UPSTREAM_UNAUTHORIZED', service, `${name} rejected the gateway's credentials.`, detail);
  }
  if (status === 404 && request.notFoundMessage !== undefined && !unknownPath) {
    return new UpstreamError('NOT_FOUND', service, request.notFoundMessage, detail);
  }
  if (status === 408 || status === 429 || status >= 500) {
    return new UpstreamError('UPSTREAM_UNAVAILABLE', service, `${name} is unavailable.`, detail);
  }
  return new UpstreamError('UPSTREAM_INVALID_RESPONSE', service, `${name} answered with an unexpected status.`, detail);
}

/** timeout: the call's own deadline; deadline: its operation's (REQUEST_TIMEOUT_MS). */
export function errorForTransport(service: UpstreamService, failure: 'timeout' | 'deadline' | 'connection', detail: object) {
  const name = serviceNames[service];
  const message = {
    timeout: `${name} did not answer in time.`,
    deadline: `${name} did not answer before the request timed out.`,
    connection: `${name} could not be reached.`,
  }[failure];
  return new UpstreamError('UPSTREAM_UNAVAILABLE', service, message, { ...detail, failure });
}

/** A call that failed before its answer was read: its deadline, its operation's, the body's size or the connection. */
export function errorForFailure(service: UpstreamService, caught: unknown, cause: string | undefined, route: string) {
  if (caught instanceof UpstreamError) return caught;
  if (cause === 'timeout' || cause === 'deadline') return errorForTransport(service, cause, { route });
  const errorCode = errorCodeOf(caught);
  if (errorCode === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
    return errorForInvalidBody(service, { route, problem: 'body exceeds the size limit' });
  }
  const errorName = caught instanceof Error ? caught.name : typeof caught;
  return errorForTransport(service, 'connection', { route, errorCode, errorName });
}

/** How a wait for shared work ends once its operation's signal aborted; `waitedFor` stands for a `route`. */
export function errorForAbort(service: UpstreamService, signal: AbortSignal, waitedFor: string): UpstreamError | CallerGoneError {
  return abortCauseOf(signal) === 'deadline'
    ? errorForTransport(service, 'deadline', { waitedFor })
    : new CallerGoneError({ upstream: service, waitedFor });
}

/** Too many upstream bytes arriving at once: nothing wrong with the answer, so a retry may succeed. */
export function errorForAnswerBytes(service: UpstreamService, detail: Record<string, unknown>): UpstreamError {
  const name = serviceNames[service];
  const message = `${name} could not be read: the gateway is receiving too many upstream answers at once; retry later.`;
  return new UpstreamError('UPSTREAM_UNAVAILABLE', service, message, detail);
}

export function errorForInvalidBody(service: UpstreamService, detail: Record<string, unknown>): UpstreamError {
  const message = `${serviceNames[service]} answered with an unexpected response.`;
  return new UpstreamError('UPSTREAM_INVALID_RESPONSE', service, message, detail);
}

/** Zod issues for the log: where and what, never the offending value. */
export function summarizeIssues(issues: readonly z.core.$ZodIssue[], limit = 20) {
  return issues.slice(0, limit).map((issue) => ({
    path: issue.path.map(String).join('.'),
    code: issue.code,
    message: issue.message,
  }));
}

/** An OAuth error code (`invalid_client`) or a vAPI type (`com.vmware.vapi.std.errors.not_found`). */
const ERROR_TYPE = /^[A-Za-z][\w.-]{0,119}$/;

/** A refusal's error type (vAPI `type`, OAuth `error`): it tells "not found" apart; the log keeps nothing else of the body. */
export function errorTypeIn(text: string): string | undefined {
  let json: { error?: unknown; type?: unknown } | null;
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    return undefined;
  }
  const type = json?.type ?? json?.error;
  return typeof type === 'string' && ERROR_TYPE.test(type) ? type : undefined;
}

const ECHO_RUN = 8;

/** An upstream may echo what it was sent: an error type repeating ECHO_RUN characters of a call's credential is dropped. */
export function forgetEchoedCredentials(error: UpstreamError, sent: Iterable<string | undefined>): void {
  const detail = error.detail!;
  const type = detail['upstreamError'];
  if (typeof type !== 'string') return;
  for (const value of sent) {
    if (value !== undefined && credentialPieces(value).some((piece) => piece !== '' && repeats(type, piece))) {
      delete detail['upstreamError'];
      return;
    }
  }
}

function repeats(type: string, piece: string): boolean {
  if (type.includes(piece)) return true;
  for (let start = 0; start + ECHO_RUN <= type.length; start++) {
    if (piece.includes(type.slice(start, start + ECHO_RUN))) return true;
  }
  return false;
}

/** The value, the credential after its scheme (`Bearer x`, `Basic x`), and a Basic credential's user and password. */
function credentialPieces(value: string): string[] {
  const space = value.indexOf(' ');
  if (space < 0) return [value];
  const credential = value.slice(space + 1);
  if (value.slice(0, space).toLowerCase() !== 'basic') return [value, credential];
  const [user, ...password] = Buffer.from(credential, 'base64').toString().split(':');
  return [value, credential, user!, password.join(':')];
}
