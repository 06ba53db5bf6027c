/**
 * The request plugins that turn a caller's mistake into a coded refusal, each in a Yoga of its own
 * (no gateway, so that each case costs milliseconds): @stream's initialCount
 * (src/gateway/plugins/limits/stream-initial-count.ts), unreadable GraphQL parameters (request-params.ts) and
 * content types no parser reads (compat/coded-refusals.ts). Over HTTP through the whole gateway:
 * stream-initial-count.test.ts, request-params.test.ts, unsupported-media-type.test.ts.
 */
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createGraphQLError, createSchema, createYoga, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useRequestParams } from '../../src/gateway/plugins/compat/request-params.js';
import { useStreamInitialCount } from '../../src/gateway/plugins/limits/stream-initial-count.js';
import { useUnsupportedMediaType } from '../../src/gateway/plugins/compat/coded-refusals.js';

interface Answer {
  data?: unknown;
  errors?: { message: string; locations?: unknown; extensions?: { code?: string } }[];
}

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    directive @page(initialCount: Int) on FIELD
    type Query { list: [Int] answer: Int }
    type Tick { list: [Int] }
    type Subscription { tick: Tick }
  `,
  resolvers: {
    Query: { list: () => [1, 2, 3], answer: () => 42 },
    Subscription: {
      tick: {
        async *subscribe() {
          yield { tick: { list: [1, 2, 3] } };
        },
      },
    },
  },
});

/** Called in each test: a plugin made while the file is collected would be made before a mutant is active. */
function yogaWith(plugins: Plugin[], options: Partial<YogaServerOptions<object, object>> = {}) {
  return createYoga({ schema, logging: false, plugins, ...options });
}

describe('@stream initialCount', () => {
  const yoga = () => yogaWith([useDeferStream(), useStreamInitialCount()]);
  const post = async (query: string, variables?: Record<string, unknown>, operationName?: string): Promise<Answer> => {
    const response = await yoga().fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables, operationName }),
    });
    return (await response.json()) as Answer;
  };
  /** A streamed answer: every part read, none with errors. */
  const streamedList = async (query: string, variables?: Record<string, unknown>) => {
    const response = await yoga().fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({ query, variables }),
    });
    const text = await response.text();
    return { status: response.status, errors: text.includes('"errors"'), done: text.includes('"hasNext":false') };
  };
  const STREAMED = { status: 200, errors: false, done: true };
  const refusedVariable = (name: string, shown: string) => ({
    errors: [
      {
        message: `Variable "$${name}" got invalid value ${shown}; @stream initialCount must be 0 or more.`,
        extensions: { code: 'BAD_USER_INPUT' },
      },
    ],
  });

  it.each([
    ['-1', '-1'],
    ['null', 'null'],
  ])('refuses the literal %s where it stands', async (count, found) => {
    const answer = await post(`{ answer list @stream(initialCount: ${count}) }`);
    expect(answer.errors).toEqual([
      {
        message: `@stream initialCount must be 0 or more, found ${found}.`,
        locations: [{ line: 1, column: 37 }],
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      },
    ]);
  });

  it('refuses initialCount below 0 wherever it stands among the arguments', async () => {
    const answer = await post('{ list @stream(if: true, label: "l", initialCount: -2) }');
    expect(answer.errors?.map((e) => e.message)).toEqual(['@stream initialCount must be 0 or more, found -2.']);
  });

  it('leaves 0, other arguments and other directives to the rest of validation', async () => {
    expect(await streamedList('{ list @stream(initialCount: 0) }')).toEqual(STREAMED);
    expect(await post('{ list @page(initialCount: -1) }')).toEqual({ data: { list: [1, 2, 3] } });
    const wrongType = await post('{ list @stream(initialCount: "-1") }');
    expect(wrongType.errors?.map((e) => e.message)).toEqual(['Int cannot represent non-integer value: "-1"']);
  });

  it.each([
    ['-5', { n: -5 }, '-5'],
    ['null', { n: null }, 'null'],
  ])('refuses a variable of %s with BAD_USER_INPUT', async (_case, variables, shown) => {
    expect(await post('query($n: Int) { list @stream(initialCount: $n) }', variables)).toEqual(refusedVariable('n', shown));
  });

  it('refuses a default below 0 when the request sends no variables at all', async () => {
    expect(await post('query($n: Int = -3) { list @stream(initialCount: $n) }')).toEqual(refusedVariable('n', '-3'));
  });

  it('accepts a variable of 0 and an absent one', async () => {
    expect(await streamedList('query($n: Int) { list @stream(initialCount: $n) }', { n: 0 })).toEqual(STREAMED);
    expect(await streamedList('query($n: Int) { list @stream(initialCount: $n) }', {})).toEqual(STREAMED);
  });

  it('refuses every variable that gives a count below 0, and only those', async () => {
    const query = 'query($a: Int, $b: Int, $c: Int) { x: list @stream(initialCount: $a) y: list @stream(initialCount: $b) z: list @stream(initialCount: $c) }';
    const answer = await post(query, { a: -1, b: 1, c: -2 });
    expect(answer.errors?.map((e) => e.message)).toEqual([
      'Variable "$a" got invalid value -1; @stream initialCount must be 0 or more.',
      'Variable "$c" got invalid value -2; @stream initialCount must be 0 or more.',
    ]);
  });

  it('coerces only the count variables: another variable that does not coerce is reported by execution', async () => {
    const answer = await post('query($n: Int, $m: Boolean!) { list @stream(initialCount: $n) answer @include(if: $m) }', { n: -1, m: 'x' });
    expect(answer).toEqual(refusedVariable('n', '-1'));
  });

  it('finds the variable through fragments, each fragment read once however often it is spread', async () => {
    const query = `query($n: Int) { ...A ...B ...A }
      fragment A on Query { ...B }
      fragment B on Query { list @stream(initialCount: $n) }`;
    expect(await post(query, { n: -1 })).toEqual(refusedVariable('n', '-1'));
  });

  it('refuses the operation it runs, among several', async () => {
    const query = 'query Fine { answer } query Refused($n: Int = -1) { list @stream(initialCount: $n) }';
    expect(await post(query, {}, 'Refused')).toEqual(refusedVariable('n', '-1'));
    expect(await post(query, {}, 'Fine')).toEqual({ data: { answer: 42 } });
  });

  it('leaves a count variable that does not coerce to execution, which reports it', async () => {
    const answer = await post('query($n: Int) { list @stream(initialCount: $n) }', { n: 'x' });
    expect(answer.errors?.map((e) => e.message)).toEqual(['Variable "$n" got invalid value "x"; Int cannot represent non-integer value: "x"']);
  });

  it('starts a subscription whose count is 0 or more', async () => {
    const response = await yoga().fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription($n: Int) { tick { list @stream(initialCount: $n) } }', variables: { n: 0 } }),
    });
    const text = await response.text();
    expect(text).toContain('"tick"');
    expect(text).not.toContain('"errors"');
  });

  it('refuses a subscription whose count variable is below 0, before it starts', async () => {
    const response = await yoga().fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription($n: Int) { tick { list @stream(initialCount: $n) } }', variables: { n: -1 } }),
    });
    const text = await response.text();
    expect(text).toContain('Variable \\"$n\\" got invalid value -1; @stream initialCount must be 0 or more.');
    expect(text).not.toContain('"tick"');
  });
});

describe('GraphQL parameters in a query string or a form body', () => {
  const yoga = () => yogaWith([useRequestParams()], { maskedErrors: false });
  const CSRF = { 'x-graphql-yoga-csrf': '1' };
  const get = (query: string) => yoga().fetch(`http://yoga.test/graphql?${query}`, { headers: CSRF });
  const postForm = (body: string, contentType = 'application/x-www-form-urlencoded') =>
    yoga().fetch('http://yoga.test/graphql', { method: 'POST', headers: { ...CSRF, 'content-type': contentType }, body });
  const ANSWER = encodeURIComponent('query Answer { answer } query List { list }');

  async function expectBadRequest(response: Response, message: string) {
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });
  }

  it.each(['variables', 'extensions'])('refuses a %s parameter that is not JSON, by GET and by form', async (name) => {
    await expectBadRequest(await get(`query=${ANSWER}&${name}=%7B`), `The "${name}" parameter is not valid JSON.`);
    await expectBadRequest(await postForm(`query=${ANSWER}&${name}=%7B`), `The "${name}" parameter is not valid JSON.`);
  });

  it('reads a form whose content type has parameters, or comes first of several', async () => {
    for (const contentType of ['application/x-www-form-urlencoded; charset=utf-8', 'application/x-www-form-urlencoded, text/plain']) {
      await expectBadRequest(await postForm('query=%7Banswer%7D&variables=%7B', contentType), 'The "variables" parameter is not valid JSON.');
    }
  });

  it('serves the operation named, with its variables, by GET and by form', async () => {
    const query = encodeURIComponent('query Answer { answer } query List($skip: Boolean!) { list @skip(if: $skip) answer }');
    const params = `query=${query}&operationName=List&variables=${encodeURIComponent('{"skip":true}')}&extensions=%7B%7D`;
    for (const response of [await get(params), await postForm(params)]) {
      expect(await response.json()).toEqual({ data: { answer: 42 } });
    }
  });

  it('takes empty parameters for absent ones', async () => {
    const response = await get('query=%7Banswer%7D&operationName=&variables=&extensions=');
    expect(await response.json()).toEqual({ data: { answer: 42 } });
    const noQuery = await get('query=&operationName=Answer');
    expect(((await noQuery.json()) as Answer).errors?.map((e) => e.message)).toEqual(['Must provide query string.']);
  });

  it('reads nothing but the query string of a GET', async () => {
    const response = await yoga().fetch('http://yoga.test/graphql', { headers: CSRF });
    expect(((await response.json()) as Answer).errors?.map((e) => e.message)).toEqual(['Must provide query string.']);
  });

  it('leaves other methods and a POST without a content type to Yoga (405, 415)', async () => {
    const put = await yoga().fetch('http://yoga.test/graphql', {
      method: 'PUT',
      headers: { ...CSRF, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'query=%7Banswer%7D&variables=%7B',
    });
    expect(put.status).toBe(405);
    const untyped = await yoga().fetch('http://yoga.test/graphql', { method: 'POST', headers: CSRF, body: new TextEncoder().encode('{}') });
    expect(untyped.status).toBe(415);
  });

  it('serves a JSON body as before', async () => {
    const response = await yoga().fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ answer }', variables: {} }),
    });
    expect(await response.json()).toEqual({ data: { answer: 42 } });
  });
});

describe('GraphQL parameters in a multipart body', () => {
  const CSRF = { 'x-graphql-yoga-csrf': '1' };
  /** Written out by hand: in process, a second FormData body came out of the encoder cut short. */
  const postMultipart = (yoga: ReturnType<typeof yogaWith>, fields: Record<string, string>) => {
    const boundary = 'boundary-7d3f';
    const parts = Object.entries(fields).map(([name, value]) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
    return yoga.fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { ...CSRF, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `${parts.join('')}--${boundary}--\r\n`,
    });
  };
  /** A parser chosen before these plugins that refuses every body with `error`. */
  const refusingParser = (error: Error): Plugin => ({
    onRequestParse: ({ setRequestParser }) =>
      setRequestParser(() => {
        throw error;
      }),
  });

  it('serves well-formed operations', async () => {
    const response = await postMultipart(yogaWith([useRequestParams()]), { operations: '{"query":"{ answer }"}' });
    expect(await response.json()).toEqual({ data: { answer: 42 } });
  });

  it('answers a parser refusal without a code as 400 BAD_REQUEST, keeping its message', async () => {
    const response = await postMultipart(yogaWith([useRequestParams()]), { foo: 'bar' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ message: 'Missing multipart form field "operations"', extensions: { code: 'BAD_REQUEST' } }],
    });
  });

  it('keeps a refusal that has a code of its own, and an error that is not a refusal', async () => {
    const coded = createGraphQLError('Too large.', { extensions: { code: 'PAYLOAD_TOO_LARGE', http: { status: 413 } } });
    const tooLarge = await postMultipart(yogaWith([refusingParser(coded), useRequestParams()]), { foo: 'bar' });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({ errors: [{ message: 'Too large.', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });

    const broken = await postMultipart(yogaWith([refusingParser(new Error('parser broke')), useRequestParams()], { maskedErrors: false }), {
      foo: 'bar',
    });
    expect(broken.status).toBe(500);
    expect(((await broken.json()) as Answer).errors?.map((e) => e.message)).toEqual(['parser broke']);
  });

  it.each(['null', '5', '"a string"'])('answers operations of %s with 400 BAD_REQUEST', async (operations) => {
    const response = await postMultipart(yogaWith([useRequestParams()]), { operations });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ message: 'Multipart form field "operations" must be a JSON object.', extensions: { code: 'BAD_REQUEST' } }],
    });
  });

  it.each(['{"0":[5]}', '{"0":null}'])('answers a map %s that gives no paths with 400 BAD_REQUEST', async (map) => {
    const boundary = 'boundary-7d3f';
    const part = (disposition: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; ${disposition}\r\n\r\n${value}\r\n`;
    const body =
      part('name="operations"', '{"query":"{ answer }"}') +
      part('name="map"', map) +
      part('name="0"; filename="a.txt"', 'a file') +
      `--${boundary}--\r\n`;
    const response = await yogaWith([useRequestParams()]).fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { ...CSRF, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'Multipart form field "map" must give each file a list of paths into the JSON object of "operations".',
          extensions: { code: 'BAD_REQUEST' },
        },
      ],
    });
  });

  it('leaves a multipart body no parser reads unread', async () => {
    const response = await postMultipart(yogaWith([useRequestParams()], { multipart: false }), { operations: '{"query":"{ answer }"}' });
    expect(response.status).toBe(415);
  });
});

describe('content types no parser reads', () => {
  const yoga = () => yogaWith([useUnsupportedMediaType()]);
  const post = (contentType: string | undefined) =>
    yoga().fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'x-graphql-yoga-csrf': '1', ...(contentType ? { 'content-type': contentType } : {}) },
      body: new TextEncoder().encode(JSON.stringify({ query: '{ answer }' })),
    });

  it.each(['text/plain', undefined])('answers a POST of %s with 415 and a JSON BAD_REQUEST error', async (contentType) => {
    const response = await post(contentType);
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({
      errors: [
        { message: 'Unsupported content type: send the GraphQL request as application/json.', extensions: { code: 'BAD_REQUEST' } },
      ],
    });
  });

  it('serves the content types a parser reads', async () => {
    expect(await (await post('application/json')).json()).toEqual({ data: { answer: 42 } });
  });
});
