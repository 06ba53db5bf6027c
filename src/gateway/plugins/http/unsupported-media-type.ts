/**
 * A POST whose content type no request parser reads (text/plain, application/graphql-response+json,
 * none at all): Yoga answers 415 with an empty body. A parser that refuses it instead keeps the 415
 * and gives it an error with a code, like every other answer.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

const unsupported = () =>
  createGraphQLError('Unsupported content type: send the GraphQL request as application/json.', {
    extensions: { http: { status: 415 }, code: 'BAD_REQUEST' },
  });

/** Goes after every plugin that may choose a request parser: it answers only where none did. */
export function useUnsupportedMediaType(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) {
        setRequestParser(() => {
          throw unsupported();
        });
      }
    },
  };
}
