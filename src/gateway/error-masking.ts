/**
 * What a client sees of an error: a GatewayError keeps its code and safe message, a caller's
 * mistake gets the code it deserves, anything unexpected is masked. HTTP (Yoga's maskedErrors) and
 * WebSocket answers go through the same function.
 */
import { GraphQLError } from 'graphql';
import { maskError as maskUnexpectedError, type MaskError } from 'graphql-yoga';
import { CallerGoneError, GatewayError } from '../lib/errors.js';
import { unauthenticated } from './plugins/auth/caller-auth.js';
import { isVariableValueError } from './variable-errors.js';

const TOKEN_NOT_VERIFIED = 'The bearer token does not verify: its signature, issuer, audience or expiry is not accepted.';

function codeOfUncodedError(error: GraphQLError): string {
  const status = error.extensions.http?.status;
  if (error.message.startsWith('Variable "$')) return 'BAD_USER_INPUT';
  // No status: a server error.
  return (status ?? 500) < 500 ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR';
}

/** Yoga's refusal of a body over `maxRequestBodySize`, by its length or counted while reading. */
const BODY_TOO_LARGE = 'REQUEST_ENTITY_TOO_LARGE';

/**
 * A GatewayError keeps its code and safe message; a caller's mistake gets the code it deserves;
 * anything unexpected is masked by Yoga's own masking.
 */
export function errorMaskingFor(maxRequestBytes: number): MaskError {
  return (error, message, isDev) => {
    const original = error instanceof GraphQLError ? error.originalError : error;
    if (original instanceof GatewayError && error instanceof GraphQLError) {
      return new GraphQLError(original.message, {
        nodes: error.nodes,
        path: error.path,
        extensions: { code: original.code },
      });
    }
    // Read by no one: the caller has gone. The code says so in the logs and metrics.
    if (original instanceof CallerGoneError && error instanceof GraphQLError) {
      return new GraphQLError(original.message, { nodes: error.nodes, path: error.path, extensions: { code: 'CANCELLED' } });
    }
    if (isVariableValueError(error)) {
      return new GraphQLError(error.message, { nodes: error.nodes, extensions: { code: 'BAD_USER_INPUT' } });
    }
    if (error instanceof GraphQLError && !error.originalError) {
      // Several operations and no (or an unknown) operationName: the request itself is wrong.
      if (error.extensions.code === 'OPERATION_RESOLUTION_FAILURE') {
        return new GraphQLError(error.message, { extensions: { ...error.extensions, code: 'BAD_REQUEST' } });
      }
      if (error.extensions.code === BODY_TOO_LARGE) {
        return new GraphQLError(`The request body is larger than ${maxRequestBytes} bytes.`, {
          extensions: { ...error.extensions, code: 'BAD_REQUEST' },
        });
      }
      if (error.extensions.code !== undefined) return error;
      // useJWT's refusal of a token that does not verify: its log line says why, the caller learns what.
      if (error.extensions.http?.status === 401) return unauthenticated(TOKEN_NOT_VERIFIED);
      // Errors of the request phase (plugins) and of variable coercion may come without a code.
      return new GraphQLError(error.message, {
        nodes: error.nodes,
        path: error.path,
        extensions: { ...error.extensions, code: codeOfUncodedError(error) },
      });
    }
    // Unexpected: Yoga's masking (its message; the original only in development), with our code.
    const masked = maskUnexpectedError(error, message, isDev);
    const { nodes, path, extensions } = masked instanceof GraphQLError ? masked : {};
    return new GraphQLError(masked.message, { nodes, path, extensions: { ...extensions, code: 'INTERNAL_SERVER_ERROR' } });
  };
}

/** The code the client sees for an error, as the masking gives it (the message plays no part). */
export function clientErrorCode(maskError: MaskError, error: unknown): string | undefined {
  const code = (maskError(error, 'Unexpected error.', false) as Partial<GraphQLError>).extensions?.code;
  return typeof code === 'string' ? code : undefined;
}
