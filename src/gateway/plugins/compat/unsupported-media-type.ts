/**
 * A POST whose content type no request parser reads (text/plain, none at all): graphql-yoga 5.24
 * answers 415 with an empty body. Here the 415 carries an error with a code, like every answer.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

const unsupported = () =>
  createGraphQLError('Unsupported content type: send the GraphQL request as application/json.', {
    extensions: { http: { status: 415 }, code: 'BAD_REQUEST' },
  });

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
