/** vAPI (content library `/rest`) error bodies: `{"type":"com.<vendor>.vapi.std.errors.X","value":{"messages":[...]}}`. */
import { jsonAnswer, type Answer } from './http-util.js';

export type VapiErrorKind =
  | 'unauthenticated'
  | 'unauthorized'
  | 'not_found'
  | 'invalid_argument'
  | 'operation_not_found'
  | 'unable_to_allocate_resource'
  | 'internal_server_error'
  | 'service_unavailable'
  | 'timed_out'
  | 'error';

export interface VapiMessage {
  readonly id: string;
  readonly defaultMessage: string;
  readonly args?: readonly string[];
}

export function vapiError(vendor: string, status: number, kind: VapiErrorKind, message: VapiMessage, headers: Record<string, string> = {}): Answer {
  return jsonAnswer(
    status,
    {
      type: `com.${vendor}.vapi.std.errors.${kind}`,
      value: { messages: [{ args: [...(message.args ?? [])], default_message: message.defaultMessage, id: message.id }] },
    },
    headers,
  );
}

export function vapiUnauthenticated(vendor: string): Answer {
  return vapiError(
    vendor,
    401,
    'unauthenticated',
    { id: 'com.vmware.vapi.endpoint.method.authentication.required', defaultMessage: 'Authentication required.' },
    { 'www-authenticate': 'Basic realm="VAPI endpoint",SIGN realm="VAPI endpoint"' },
  );
}

/** The vAPI error kind a status is usually reported with. */
export function vapiKindFor(status: number): VapiErrorKind {
  const kinds: Record<number, VapiErrorKind> = {
    400: 'invalid_argument',
    401: 'unauthenticated',
    403: 'unauthorized',
    404: 'not_found',
    429: 'unable_to_allocate_resource',
    500: 'internal_server_error',
    503: 'service_unavailable',
    504: 'timed_out',
  };
  return kinds[status] ?? 'error';
}
