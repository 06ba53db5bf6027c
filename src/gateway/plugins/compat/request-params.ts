/**
 * Unreadable parameters are a 400 BAD_REQUEST. graphql-yoga 5.24 JSON.parses GET and form `variables`/`extensions` unguarded
 * (500); its multipart parser refuses `operations` or `map` uncoded, throws a TypeError on a `map` of no paths, passes `null`.
 */
import { GraphQLError } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { refusal } from './coded-refusals.js';

/** As Yoga tests it: the first of a list, with or without parameters. */
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
    throw refusal(`The "${name}" parameter is not valid JSON.`);
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

const MAP_NOT_PATHS = 'Multipart form field "map" must give each file a list of paths into the JSON object of "operations".';
const OPERATIONS_NOT_OBJECT = 'Multipart form field "operations" must be a JSON object.';

function coded(error: unknown): unknown {
  if (error instanceof TypeError) return refusal(MAP_NOT_PATHS);
  if (!(error instanceof GraphQLError) || error.extensions.code !== undefined) return error;
  return refusal(error.message);
}

export function useRequestParams(): Plugin {
  return {
    onRequestParse({ request, url, requestParser, setRequestParser }) {
      if (request.method === 'GET') {
        setRequestParser(() => graphQLParamsOf(url.searchParams));
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
          if (typeof operations !== 'object' || operations === null) throw refusal(OPERATIONS_NOT_OBJECT);
          return operations as GraphQLParams;
        });
      }
    },
  };
}
