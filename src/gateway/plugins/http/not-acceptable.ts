/**
 * A request whose Accept header allows none of the media types its answer can take (`image/png`;
 * `text/html` for an operation, GraphiQL aside; `application/json` for a subscription): Yoga
 * answers 406 with an empty body. Here the 406 carries an error with code BAD_REQUEST naming the
 * media types the gateway can answer that request with. The body is JSON whatever the request
 * accepts: a server may answer outside Accept (RFC 9110 §12.1), and the client learns what to ask.
 */
import { createGraphQLError, processRegularResult, type Plugin } from 'graphql-yoga';

function notAcceptable(mediaTypes: readonly string[]) {
  const message =
    mediaTypes.length > 0
      ? `The Accept header allows none of the media types this request can be answered with: ${mediaTypes.join(', ')}.`
      : 'The Accept header allows no media type in UTF-8, the only charset the gateway answers in.';
  return createGraphQLError(message, { extensions: { http: { status: 406 }, code: 'BAD_REQUEST' } });
}

/** Goes after Yoga's result processors (as every plugin does), and answers only where none applies. */
export function useNotAcceptable(): Plugin {
  return {
    onResultProcess({ resultProcessor, acceptableMediaTypes, setResult, setResultProcessor }) {
      if (resultProcessor) return;
      // Yoga lists each type it offered once per type the request asked for.
      setResult({ errors: [notAcceptable([...new Set(acceptableMediaTypes)].sort())] });
      setResultProcessor(processRegularResult, 'application/json');
    },
  };
}
