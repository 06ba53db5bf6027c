/** What a faulted call answers: a plausible error for its route and status, or a malformed 200. */
import type { MalformKind, SimulatorRoute } from './types.js';
import type { PlannedFailure } from './faults.js';
import { jsonAnswer, rawJsonAnswer, type Answer } from './http-util.js';
import { vapiError, vapiKindFor, vapiUnauthenticated } from './vapi.js';

/** OAuth-style error codes the identity service would plausibly use for a status. */
function identityErrorCode(route: SimulatorRoute, status: number): string {
  if (status === 401) return route === 'token' ? 'invalid_client' : 'invalid_token';
  const codes: Record<number, string> = {
    400: 'invalid_request',
    403: 'access_denied',
    404: 'not_found',
    429: 'too_many_requests',
    503: 'temporarily_unavailable',
  };
  return codes[status] ?? 'server_error';
}

/**
 * 502 and 504 come from the load balancer in front of either service, so they are HTML, as they
 * are in real deployments; everything else is the service's own JSON error.
 */
export function failureAnswer(route: SimulatorRoute, failure: PlannedFailure, vendor: string): Answer {
  const headers: Record<string, string> = {};
  if (failure.retryAfterSeconds !== undefined) headers['retry-after'] = String(failure.retryAfterSeconds);
  const { status } = failure;
  if (status === 502 || status === 504) {
    const title = status === 502 ? '502 Bad Gateway' : '504 Gateway Time-out';
    return {
      status,
      headers: { 'content-type': 'text/html', ...headers },
      body: `<html><head><title>${title}</title></head><body><center><h1>${title}</h1></center></body></html>\n`,
    };
  }
  if (route === 'session' || route === 'files') {
    if (status === 401) {
      const answer = vapiUnauthenticated(vendor);
      return { ...answer, headers: { ...answer.headers, ...headers } };
    }
    const message = { id: 'com.vmware.vapi.simulated.failure', defaultMessage: `Simulated failure (HTTP ${status}).` };
    return vapiError(vendor, status, vapiKindFor(status), message, headers);
  }
  const error = identityErrorCode(route, status);
  if (status === 401) headers['www-authenticate'] = route === 'token' ? 'Basic realm="oauth"' : `Bearer error="${error}"`;
  return jsonAnswer(status, { error, error_description: `Simulated failure (HTTP ${status}).` }, headers);
}

/** A 200 whose body does not match the route's documented shape. */
export function malformedAnswer(route: SimulatorRoute, kind: MalformKind): Answer {
  if (kind === 'shape') return rawJsonAnswer(200, '{"unexpected":true}');
  const truncated: Record<SimulatorRoute, string> = {
    token: '{"access_token":"eyJhbGciOiJSUzI1NiJ9.eyJqdGkiOiI',
    audit: '{"header":["reports.dateAndTime","reports.userDomain","reports.Event","reports.object",""],"data":[["17',
    session: '{"value":"b00db39f948d',
    files: '{"value":[{"name":"disk-0.vmdk","source_type":"PU',
  };
  return rawJsonAnswer(200, truncated[route]);
}
