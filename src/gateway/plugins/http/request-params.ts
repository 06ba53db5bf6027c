/**
 * A request whose GraphQL parameters cannot be read is the caller's mistake: 400 BAD_REQUEST, as
 * Yoga answers a JSON body that does not parse.
 * - A query string (GET) or form body (application/x-www-form-urlencoded): Yoga's parsers
 *   JSON.parse `variables` and `extensions` unguarded, so a value that is not JSON (a malformed
 *   % escape included) was an unexpected SyntaxError, HTTP 500. These are read here instead, as
 *   Yoga reads them, and the refusal names the parameter.
 * - A multipart body: Yoga's parser refuses a missing or malformed `operations` or `map` without
 *   a code or status, which the masking takes for an unexpected error. It also follows `map`
 *   without checking its shape (each value must be a list of paths into `operations`), and hands
 *   on an `operations` of `null`, each an unexpected TypeError later.
 */
import { GraphQLError } from 'graphql';
import { createGraphQLError, type GraphQLParams, type Plugin } from 'graphql-yoga';

const badRequest = (message: string) =>
  createGraphQLError(message, { extensions: { http: { status: 400 }, code: 'BAD_REQUEST' } });

/** Yoga's test of the content type: the first of a list, with or without parameters. */
function contentTypeIs(request: Request, type: string): boolean {
  const contentType = request.headers.get('content-type')?.split(',')[0];
  return contentType === type || !!contentType?.startsWith(`${type};`);
}

function jsonParameter(params: URLSearchParams, name: 'variables' | 'extensions'): unknown {
  const text = params.get(name);
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(`The "${name}" parameter is not valid JSON.`);
  }
}

function graphQLParamsOf(params: URLSearchParams): GraphQLParams {
  return {
    operationName: params.get('operationName') || undefined,
    query: params.get('query') || undefined,
    variables: jsonParameter(params, 'variables') as GraphQLParams['variables'],
    extensions: jsonParameter(params, 'extensions') as GraphQLParams['extensions'],
  };
}

// Stryker disable next-line StringLiteral: a URL without `?` has no parameters, and neither has any text without `=` and `&`
const queryStringOf = (url: string) => (url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');

const MAP_NOT_PATHS = 'Multipart form field "map" must give each file a list of paths into the JSON object of "operations".';
const OPERATIONS_NOT_OBJECT = 'Multipart form field "operations" must be a JSON object.';

/**
 * A parser's refusal without a code of its own is about the request; so is a TypeError, which
 * Yoga's multipart parser throws only while it follows `map` into `operations`.
 */
function coded(error: unknown): unknown {
  if (error instanceof TypeError) return badRequest(MAP_NOT_PATHS);
  if (!(error instanceof GraphQLError) || error.extensions.code !== undefined) return error;
  return badRequest(error.message);
}

/** Goes after Yoga's parsers and before the body limit, which then feeds the parser set here. */
export function useRequestParams(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (request.method === 'GET') {
        setRequestParser((get) => graphQLParamsOf(new URLSearchParams(queryStringOf(get.url))));
      } else if (request.method === 'POST' && contentTypeIs(request, 'application/x-www-form-urlencoded')) {
        setRequestParser(async (form) => graphQLParamsOf(new URLSearchParams(await form.text())));
      } else if (requestParser && contentTypeIs(request, 'multipart/form-data')) {
        const parse = requestParser;
        setRequestParser(async (multipart) => {
          let operations: unknown;
          try {
            operations = await parse(multipart);
          } catch (error) {
            throw coded(error);
          }
          // A JSON body must be an object (or a list, refused as a batch); so must operations.
          if (typeof operations !== 'object' || operations === null) throw badRequest(OPERATIONS_NOT_OBJECT);
          return operations as GraphQLParams;
        });
      }
    },
  };
}
