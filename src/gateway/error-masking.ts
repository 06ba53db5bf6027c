/** What a client sees of an error: a GatewayError keeps its code and message, anything unexpected is masked. */
import { GraphQLError } from 'graphql';
import { maskError as maskUnexpectedError, type MaskError } from 'graphql-yoga';
import { CallerGoneError, GatewayError } from '../lib/errors.js';

/** A variable value that does not coerce: graphql-js reports it without a path, wrapping the value's own error. */
export const isVariableValueError = (error: unknown): error is GraphQLError =>
  error instanceof GraphQLError && !error.path && error.originalError instanceof GraphQLError;

export function errorMaskingFor(maxRequestBytes: number): MaskError {
  return (error, message, isDev) => {
    const original = error instanceof GraphQLError ? error.originalError : error;
    if (error instanceof GraphQLError && (original instanceof GatewayError || original instanceof CallerGoneError)) {
      // A caller gone is read by no one: the code says so in the logs and metrics.
      const code = original instanceof GatewayError ? original.code : 'CANCELLED';
      return new GraphQLError(original.message, { nodes: error.nodes, path: error.path, extensions: { code } });
    }
    if (isVariableValueError(error)) {
      return new GraphQLError(error.message, { nodes: error.nodes, extensions: { code: 'BAD_USER_INPUT' } });
    }
    if (error instanceof GraphQLError && !error.originalError) {
      // Several operations and no (or an unknown) operationName: the request itself is wrong.
      if (error.extensions.code === 'OPERATION_RESOLUTION_FAILURE') {
        return new GraphQLError(error.message, { extensions: { ...error.extensions, code: 'BAD_REQUEST' } });
      }
      // Yoga's refusal of a body over `maxRequestBodySize`, by its length or counted while reading.
      if (error.extensions.code === 'REQUEST_ENTITY_TOO_LARGE') {
        return new GraphQLError(`The request body is larger than ${maxRequestBytes} bytes.`, {
          extensions: { ...error.extensions, code: 'BAD_REQUEST' },
        });
      }
      if (error.extensions.code !== undefined) return error;
      // Errors of the request phase (plugins) and of variable coercion may come without a code.
      const status = error.extensions.http?.status ?? 500;
      const byStatus = status < 500 ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR';
      const code = error.message.startsWith('Variable "$') ? 'BAD_USER_INPUT' : byStatus;
      return new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions: { ...error.extensions, code } });
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
