/**
 * GraphQL parameters that cannot be read are the caller's mistake: 400 BAD_REQUEST. graphql-yoga
 * 5.24's parsers get this wrong: they JSON.parse the `variables` and `extensions` of a query string
 * or form body unguarded (HTTP 500); the multipart parser refuses a missing or malformed
 * `operations` or `map` without a code, follows a `map` that is no list of paths into a TypeError,
 * and hands on an `operations` of `null`.
 */
import { GraphQLError } from 'graphql';
import { createGraphQLError, type GraphQLParams, type Plugin } from 'graphql-yoga';

const badRequest = (message: string) =>
  createGraphQLError(message, { extensions: { http: { status: 400 }, code: 'BAD_REQUEST' } });

/** The content type as Yoga tests it: the first of a list, with or without parameters. */
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

const queryStringOf = (url: string) => (url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');

const MAP_NOT_PATHS = 'Multipart form field "map" must give each file a list of paths into the JSON object of "operations".';
const OPERATIONS_NOT_OBJECT = 'Multipart form field "operations" must be a JSON object.';

/** A parser's refusal without a code is about the request; so is the TypeError of following `map`. */
function coded(error: unknown): unknown {
  if (error instanceof TypeError) return badRequest(MAP_NOT_PATHS);
  if (!(error instanceof GraphQLError) || error.extensions.code !== undefined) return error;
  return badRequest(error.message);
}

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
