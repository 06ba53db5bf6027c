/**
 * A request whose Accept header allows none of the media types its answer can take: graphql-yoga
 * 5.24 answers 406 with an empty body. Here the 406 carries a BAD_REQUEST error naming the media
 * types the request can be answered with, as JSON whatever it accepts (RFC 9110 §12.1 allows it).
 */
import { createGraphQLError, processRegularResult, type Plugin } from 'graphql-yoga';

function notAcceptable(mediaTypes: readonly string[]) {
  const message =
    mediaTypes.length > 0
      ? `The Accept header allows none of the media types this request can be answered with: ${mediaTypes.join(', ')}.`
      : 'The Accept header allows no media type in UTF-8, the only charset the gateway answers in.';
  return createGraphQLError(message, { extensions: { http: { status: 406 }, code: 'BAD_REQUEST' } });
}

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
