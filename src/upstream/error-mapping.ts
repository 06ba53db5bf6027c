/**
 * The one place where what an upstream did becomes a typed UpstreamError. Messages are for clients
 * (no URL, token, secret or upstream body); `detail` is for the log only, and never holds secrets.
 */
import type { z } from 'zod';
import { CallerGoneError, UpstreamError, type UpstreamService } from '../lib/errors.js';
import { abortCauseOf } from './deadline.js';

const serviceNames: Record<UpstreamService, string> = {
  identity: 'The identity service',
  'content-library': 'The content library service',
};

/** A 400 on a credential route refuses the credentials; `notFoundMessage`: a 404 means the thing asked for does not exist. */
export function errorForStatus(
  service: UpstreamService,
  status: number,
  context: { readonly credentialRoute?: boolean | undefined; readonly notFoundMessage?: string | undefined; readonly detail: object },
): UpstreamError {
  const name = serviceNames[service];
  const detail = { ...context.detail, status };
  if (status === 401 || status === 403 || (status === 400 && context.credentialRoute)) {
    return new UpstreamError('UPSTREAM_UNAUTHORIZED', service, `${name} rejected the gateway's credentials.`, detail);
  }
  if (status === 404 && context.notFoundMessage !== undefined) {
    return new UpstreamError('NOT_FOUND', service, context.notFoundMessage, detail);
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

/** How a wait for shared work ends once its operation's signal aborted; `waitedFor` stands for a `route`. */
export function errorForAbort(service: UpstreamService, signal: AbortSignal, waitedFor: string): UpstreamError | CallerGoneError {
  return abortCauseOf(signal) === 'deadline'
    ? errorForTransport(service, 'deadline', { waitedFor })
    : new CallerGoneError({ upstream: service, waitedFor });
}

/** Too many upstream bytes arriving at once: nothing wrong with the answer, so a retry may succeed. */
export function errorForAnswerBytes(service: UpstreamService, detail: Record<string, unknown>): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_UNAVAILABLE',
    service,
    `${serviceNames[service]} could not be read: the gateway is receiving too many upstream answers at once; retry later.`,
    detail,
  );
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
