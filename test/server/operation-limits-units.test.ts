/**
 * The operation limits (src/gateway/plugins/limits/operation-limits.ts) in a Yoga of their own, made inside each
 * test, over a small schema with the shapes the limits look at: each limit's last accepted
 * operation and its first refused one, with the exact refusal a client reads. Through the whole
 * gateway and its schema: limits.test.ts.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useOperationLimits } from '../../src/gateway/plugins/limits/operation-limits.js';

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query {
      node: Node
      auditEvents(first: Int): [String!]!
      text(value: [[String]]): String
    }
    type Node {
      child: Node
      name: String
      list(first: Int): [Node]
    }
  `,
  resolvers: {
    Query: { node: () => ({}), auditEvents: () => [], text: () => 'x' },
    Node: { child: () => ({}), name: () => 'n', list: () => [] },
  },
});

interface Answer {
  data?: Record<string, unknown>;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function post(query: string): Promise<Answer> {
  const yoga = createYoga({ schema, logging: false, plugins: useOperationLimits({ largeOperationConcurrency: 2 }) });
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as Answer;
}

const refused = (message: string, code = 'GRAPHQL_VALIDATION_FAILED') => ({ errors: [{ message, extensions: { code } }] });
const served = (answer: Answer) => {
  expect(answer.errors).toBeUndefined();
  expect(answer.data).toBeDefined();
};
const repeat = (count: number, part: (i: number) => string) => Array.from({ length: count }, (_, i) => part(i)).join(' ');

describe('operation limits', () => {
  it('serves a selection 20 levels deep and refuses one 21 deep', async () => {
    const deep = (children: number) => `{ node { ${'child { '.repeat(children)}name${' }'.repeat(children)} } }`;
    served(await post(deep(18)));
    expect(await post(deep(19))).toEqual(refused('Query depth limit of 20 exceeded, found 21.'));
  });

  it('counts the depth of fragments where they are spread', async () => {
    const deep = (children: number) =>
      `{ node { ...F } } fragment F on Node { ${'child { '.repeat(children)}name${' }'.repeat(children)} }`;
    served(await post(deep(18)));
    expect(await post(deep(19))).toEqual(refused('Query depth limit of 20 exceeded, found 21.'));
  });

  it('lets introspection through however deep and costly (GraphiQL introspects)', async () => {
    const answer = await post(`{ __schema { types { ${'ofType { '.repeat(40)}name${' }'.repeat(40)} } } }`);
    served(answer);
  });

  it('serves 30 aliases and refuses 31', async () => {
    served(await post(`{ ${repeat(30, (i) => `a${i}: node { name }`)} }`));
    expect(await post(`{ ${repeat(31, (i) => `a${i}: node { name }`)} }`)).toEqual(refused('Aliases limit of 30 exceeded, found 31.'));
  });

  it('serves 50 directives and refuses 51', async () => {
    served(await post(`{ ${repeat(50, () => 'node @skip(if: false) { name }')} }`));
    expect(await post(`{ ${repeat(51, () => 'node @skip(if: false) { name }')} }`)).toEqual(
      refused('Directives limit of 50 exceeded, found 51.'),
    );
  });

  it('refuses a document of more than 4000 tokens while parsing it', async () => {
    const tokens = (strings: number) => `{ text(value: [[${' "a"'.repeat(strings)}]]) }`;
    served(await post(tokens(3989)));
    expect(await post(tokens(3990))).toEqual(refused('Syntax Error: Token limit of 4000 exceeded.', 'GRAPHQL_PARSE_FAILED'));
  });

  it('refuses brackets open more than 64 deep while parsing', async () => {
    const nested = (lists: number) => `{ text(value: ${'['.repeat(lists)}${']'.repeat(lists)}) }`;
    expect((await post(nested(62))).errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await post(nested(63))).toEqual(
      refused('Syntax Error: The document is nested too deeply (more than 64 levels).', 'GRAPHQL_PARSE_FAILED'),
    );
  });

  it('serves operations costing up to 5 million and refuses costlier ones', async () => {
    const wide = (size: number) =>
      `{ ${repeat(25, (i) => `a${i}: node { list(first: ${size}) { list(first: ${size}) { name child { name } } } }`)} }`;
    served(await post(wide(50)));
    const answer = await post(wide(150));
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/^Query Cost limit of 5000000 exceeded, found [\d.]+\.$/),
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
  });

  it('bounds the work of merging fields that share a response key', async () => {
    served(await post(`{ node { ${'name '.repeat(80)} } }`));
    const answer = await post(`{ node { ${'name '.repeat(200)} } }`);
    expect(answer.errors?.map((e) => e.extensions?.code)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(answer.data).toBeUndefined();
  });

  it('serves 10,000 audit rows in one operation and refuses more', async () => {
    served(await post('{ a: auditEvents(first: 5000) b: auditEvents(first: 5000) }'));
    expect(await post('{ auditEvents(first: 10001) }')).toEqual(
      refused('The operation asks for 10001 audit rows; at most 10000 are served per operation. Page through them instead.'),
    );
  });

  it('refuses an operation type the schema has no root for as a validation error', async () => {
    const answer = await post('mutation { x }');
    expect(answer.errors).toEqual([
      {
        message: 'This schema does not support mutation operations.',
        locations: [{ line: 1, column: 1 }],
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      },
    ]);
  });

  it('still suggests the field a misspelt name meant', async () => {
    expect((await post('{ nod { name } }')).errors?.[0]?.message).toBe('Cannot query field "nod" on type "Query". Did you mean "node"?');
  });
});
