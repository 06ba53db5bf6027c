/**
 * graphql-yoga 5.24's request-phase refusals given a code and a safe message: its 406 and 415 come with
 * an empty body, and a body that is not JSON is echoed (it may hold a secret) in `extensions.originalError`.
 */
import { GraphQLError } from 'graphql';
import { createGraphQLError, processRegularResult, type Plugin } from 'graphql-yoga';

/** A request-phase refusal: Yoga answers it with `status` and `headers`, the body naming `code`. */
export const refusal = (message: string, status = 400, code = 'BAD_REQUEST', headers?: Record<string, string>) =>
  createGraphQLError(message, { extensions: { http: { status, headers }, code } });

/** A 406 naming the media types the request can be answered with, as JSON whatever it accepts (RFC 9110 §12.1). */
export function useNotAcceptable(): Plugin {
  return {
    onResultProcess({ resultProcessor, acceptableMediaTypes, setResult, setResultProcessor }) {
      if (resultProcessor) return;
      // Yoga lists each type it offered once per type the request asked for.
      const mediaTypes = [...new Set(acceptableMediaTypes)].sort();
      const message =
        mediaTypes.length > 0
          ? `The Accept header allows none of the media types this request can be answered with: ${mediaTypes.join(', ')}.`
          : 'The Accept header allows no media type in UTF-8, the only charset the gateway answers in.';
      setResult({ errors: [refusal(message, 406)] });
      setResultProcessor(processRegularResult, 'application/json');
    },
  };
}

/** A POST whose content type no request parser reads (text/plain, none at all). */
export function useUnsupportedMediaType(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (requestParser) return;
      setRequestParser(() => {
        throw refusal('Unsupported content type: send the GraphQL request as application/json.', 415);
      });
    },
  };
}

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
