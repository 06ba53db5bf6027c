/**
 * GraphQL parameters that cannot be read, over real HTTP: a `variables` or `extensions` parameter
 * that is not JSON, in a query string or a form body, used to be HTTP 500 INTERNAL_SERVER_ERROR;
 * a malformed multipart body (fields missing or not JSON, `operations` of null, a `map` that is
 * not an object of lists of paths), INTERNAL_SERVER_ERROR logged as unexpected. Like a JSON body
 * that does not parse, they are 400 BAD_REQUEST, and well-formed ones are served as before.
 */
import { describe, expect, it } from 'vitest';
import { servedGateway } from '../helpers/gateway.js';

const served = servedGateway();

/** A header a cross-site form cannot send: GET, form and multipart requests need one. */
const CSRF = { 'x-graphql-yoga-csrf': '1' };
const TYPENAME = encodeURIComponent('{ __typename }');

const get = (query: string) => fetch(`${served.server.url}?${query}`, { headers: CSRF });
const postForm = (body: string) =>
  fetch(served.server.url, { method: 'POST', headers: { ...CSRF, 'content-type': 'application/x-www-form-urlencoded' }, body });

async function expectBadRequest(response: Response, message: string | RegExp) {
  expect(response.status).toBe(400);
  const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
  expect(body.errors).toHaveLength(1);
  expect(body.errors[0]!.extensions).toEqual({ code: 'BAD_REQUEST' });
  expect(body.errors[0]!.message).toMatch(message);
}

const errorLines = () => served.gateway.logs().filter((line) => (line.level as number) >= 50);

describe('GraphQL parameters in a query string or a form body', () => {
  it.each([
    ['variables', '%7B'],
    ['extensions', '%7B'],
    ['variables', '%ZZ'],
    ['extensions', '%E0%A4%A'],
  ])('answers a GET whose %s is %s with 400 BAD_REQUEST naming it', async (name, value) => {
    await expectBadRequest(await get(`query=${TYPENAME}&${name}=${value}`), `The "${name}" parameter is not valid JSON.`);
    expect(errorLines()).toEqual([]);
  });

  it.each([
    ['variables', '%7B'],
    ['extensions', 'not%20json'],
    ['variables', '%ZZ'],
  ])('answers a form POST whose %s is %s with 400 BAD_REQUEST naming it', async (name, value) => {
    await expectBadRequest(await postForm(`query=${TYPENAME}&${name}=${value}`), `The "${name}" parameter is not valid JSON.`);
    expect(errorLines()).toEqual([]);
  });

  it('serves well-formed parameters, by GET and by form', async () => {
    const query = encodeURIComponent('query Page($first: Int) { auditEvents(first: $first) { edges { cursor } } }');
    const params = `query=${query}&operationName=Page&variables=${encodeURIComponent('{"first":2}')}&extensions=%7B%7D`;
    for (const response of [await get(params), await postForm(params)]) {
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: { auditEvents: { edges: unknown[] } } };
      expect(body.data.auditEvents.edges).toHaveLength(2);
    }
  });

  it('keeps the refusals of parameters that are JSON but not objects', async () => {
    await expectBadRequest(await get(`query=${TYPENAME}&variables=1`), /"variables" param to be empty or an object/);
  });
});

describe('GraphQL parameters in a multipart body', () => {
  /** A multipart body with these fields, and a file `0` when `map` is given. */
  const postMultipart = (fields: Record<string, string>) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    if ('map' in fields) form.append('0', new Blob(['a file']), 'hostname');
    return fetch(served.server.url, { method: 'POST', headers: CSRF, body: form });
  };
  const OPERATIONS = '{"query":"{ __typename }","variables":{}}';
  const MAP_NOT_PATHS = 'Multipart form field "map" must give each file a list of paths into the JSON object of "operations".';
  const OPERATIONS_NOT_OBJECT = 'Multipart form field "operations" must be a JSON object.';

  it.each([
    ['no operations field', { foo: 'bar' }, 'Missing multipart form field "operations"'],
    ['operations that are not JSON', { operations: '{' }, 'Multipart form field "operations" must be a valid JSON string'],
    ['a map that is not JSON', { operations: '{"query":"{ __typename }"}', map: '{' }, 'Multipart form field "map" must be a valid JSON string'],
  ])('answers %s with 400 BAD_REQUEST', async (_case, fields, message) => {
    await expectBadRequest(await postMultipart(fields), message);
  });

  it.each([
    ['null', {}],
    ['null', { map: '{}' }],
    ['5', {}],
    ['"a string"', {}],
  ])('answers operations of %s (%j) with 400 BAD_REQUEST, logged as a caller mistake', async (operations, rest) => {
    await expectBadRequest(await postMultipart({ operations, ...rest }), OPERATIONS_NOT_OBJECT);
    expect(errorLines()).toEqual([]);
  });

  it('answers a list of operations that are not objects as a batch, which the gateway does not take', async () => {
    await expectBadRequest(await postMultipart({ operations: '[1, null]' }), 'Batching is not supported.');
  });

  it.each(['{"0":[5]}', '{"0":[null]}', '{"0":[{}]}', '{"0":[true]}', '{"0":5}', '{"0":null}', '{"0":{}}'])(
    'answers a map of %s with 400 BAD_REQUEST, logged as a caller mistake',
    async (map) => {
      await expectBadRequest(await postMultipart({ operations: OPERATIONS, map }), MAP_NOT_PATHS);
      expect(errorLines()).toEqual([]);
    },
  );

  it('answers a map into operations that are not an object with 400 BAD_REQUEST', async () => {
    await expectBadRequest(await postMultipart({ operations: '5', map: '{"0":["variables.file"]}' }), MAP_NOT_PATHS);
    expect(errorLines()).toEqual([]);
  });

  it('serves operations with a map of paths', async () => {
    const response = await postMultipart({ operations: OPERATIONS, map: '{"0":["variables.file"]}' });
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('serves well-formed operations', async () => {
    const response = await postMultipart({ operations: '{"query":"{ __typename }"}' });
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });
});
