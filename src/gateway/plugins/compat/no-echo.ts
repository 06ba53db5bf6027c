/**
 * Request-phase errors must not echo what the caller sent: graphql-yoga 5.24 puts the JSON
 * parser's message (an excerpt of the body, which may hold a secret) in `extensions.originalError`.
 */
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

function withoutOriginalError(error: GraphQLError): GraphQLError {
  if (!error.extensions || !('originalError' in error.extensions)) return error;
  const { originalError: _echo, http, ...extensions } = error.extensions;
  // Without `spec`, the 400 applies to application/json answers too, as it did with the echo.
  const { spec: _spec, ...status } = (http ?? {}) as Record<string, unknown>;
  return new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions: { ...extensions, http: status } });
}

export function useNoEchoedInput(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || !('errors' in result) || !result.errors?.length) return;
      if (!result.errors.some((e) => e.extensions && 'originalError' in e.extensions)) return;
      setResult({ ...result, errors: result.errors.map((e) => withoutOriginalError(e as GraphQLError)) });
    },
  };
}
