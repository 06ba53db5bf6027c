/**
 * The guard around federation `_entities` (src/gateway/schema/compat/entities.ts), over a small subgraph built in
 * each test: bad representations fail at their own index and are never loaded, the good ones resolve
 * in order, and a request's representations are counted over all its `_entities` fields. Through the
 * whole gateway: test/hardening/entities.test.ts.
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import { buildSchema, graphql, GraphQLSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { guardEntities, MAX_REPRESENTATIONS } from '../../src/gateway/schema/compat/entities.js';

/** A subgraph of two entity types; `loaded` records every reference its resolvers were asked for. */
function subgraph(guarded = true) {
  const loaded: unknown[] = [];
  const schema = buildSubgraphSchema({
    typeDefs: parse(/* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.0", import: ["@key"])
      type Thing @key(fields: "id") { id: ID! }
      type Other @key(fields: "id") { id: ID! }
      type Query { thing: Thing }
    `),
    resolvers: {
      Thing: {
        __resolveReference: (reference: { id: string }) => {
          loaded.push(reference);
          return { id: reference.id };
        },
      },
      Other: {
        __resolveReference: async (reference: { id: string }) => {
          loaded.push(reference);
          return { id: `other-${reference.id}` };
        },
      },
    },
  });
  return { schema: guarded ? guardEntities(schema) : schema, loaded };
}

const ENTITIES = /* GraphQL */ `
  query ($r: [_Any!]!) {
    _entities(representations: $r) { __typename ... on Thing { id } ... on Other { id } }
  }
`;
/** The result as JSON, each error with the code of the error it wraps (the gateway's masking writes it out). */
const run = (schema: GraphQLSchema, source: string, variableValues: Record<string, unknown>, contextValue: object = {}) =>
  graphql({ schema, source, variableValues, contextValue }).then((result) => ({
    data: JSON.parse(JSON.stringify(result.data)) as Record<string, unknown> | null | undefined,
    errors: result.errors?.map((error) => ({
      message: error.message,
      path: error.path,
      locations: error.locations,
      code: (error.originalError as { code?: string } | undefined)?.code,
    })),
  }));
const thing = (id: string) => ({ __typename: 'Thing', id });
const other = (id: string) => ({ __typename: 'Other', id });
const refusal = (index: number, message: string) => ({
  message,
  path: ['_entities', index],
  locations: [{ line: 3, column: 5 }],
  code: 'BAD_USER_INPUT',
});

describe('_entities', () => {
  it('answers every bad representation at its own index, loads none of them, and the good ones in order', async () => {
    const { schema, loaded } = subgraph();
    const representations = [
      thing('a'),
      'text',
      ['Thing'],
      { id: 'x' },
      { __typename: 7, id: 'x' },
      { __typename: 'Query', id: 'x' },
      other('b'),
      thing('c'),
    ];
    const result = await run(schema, ENTITIES, { r: representations });
    expect(result.data).toEqual({
      _entities: [
        { __typename: 'Thing', id: 'a' },
        null,
        null,
        null,
        null,
        null,
        { __typename: 'Other', id: 'other-b' },
        { __typename: 'Thing', id: 'c' },
      ],
    });
    expect(result.errors).toEqual([
      refusal(1, 'Representation 1 must be an object with a __typename.'),
      refusal(2, 'Representation 2 must be an object with a __typename.'),
      refusal(3, 'Representation 3 has no __typename.'),
      refusal(4, 'Representation 4 has no __typename.'),
      refusal(5, 'Representation 5 names a type this subgraph does not resolve.'),
    ]);
    expect(loaded).toEqual([thing('a'), other('b'), thing('c')]);
  });

  it('answers a list of bad representations without loading anything', async () => {
    const { schema, loaded } = subgraph();
    const result = await run(schema, ENTITIES, { r: [{ __typename: 'Nope' }] });
    expect(result.data).toEqual({ _entities: [null] });
    expect(result.errors).toEqual([refusal(0, 'Representation 0 names a type this subgraph does not resolve.')]);
    expect(loaded).toEqual([]);
  });

  it(`resolves ${MAX_REPRESENTATIONS} representations in a request, counted over its aliases, and fails the field that passes them`, async () => {
    expect(MAX_REPRESENTATIONS).toBe(100);
    const { schema, loaded } = subgraph();
    const many = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => thing(`${prefix}${i}`));
    const TWO = /* GraphQL */ `
      query ($a: [_Any!]!, $b: [_Any!]!) {
        a: _entities(representations: $a) { ... on Thing { id } }
        b: _entities(representations: $b) { ... on Thing { id } }
      }
    `;
    const full = await run(schema, TWO, { a: many(60, 'a'), b: many(40, 'b') });
    expect(full.errors).toBeUndefined();
    expect(full.data).toEqual({ a: many(60, 'a').map(({ id }) => ({ id })), b: many(40, 'b').map(({ id }) => ({ id })) });

    loaded.length = 0;
    const over = await run(schema, TWO, { a: many(60, 'a'), b: many(41, 'b') });
    // `_entities` is non-null: its failure nulls the whole answer, after the first field's loads.
    expect(over.data).toBeNull();
    expect(over.errors).toEqual([
      {
        message: 'At most 100 representations are resolved per request; this one sent 101.',
        path: ['b'],
        locations: [{ line: 4, column: 9 }],
        code: 'BAD_USER_INPUT',
      },
    ]);
    expect(loaded).toHaveLength(60);
  });

  it('counts each request apart', async () => {
    const { schema } = subgraph();
    const hundred = Array.from({ length: 100 }, (_, i) => thing(`t${i}`));
    for (let i = 0; i < 2; i++) {
      const result = await run(schema, ENTITIES, { r: hundred }, {});
      expect(result.errors).toBeUndefined();
    }
    const context = {};
    expect((await run(schema, ENTITIES, { r: hundred.slice(0, 50) }, context)).errors).toBeUndefined();
    expect((await run(schema, ENTITIES, { r: hundred.slice(0, 51) }, context)).errors?.[0]?.message).toBe(
      'At most 100 representations are resolved per request; this one sent 101.',
    );
  });

  it('refuses a null representation handed to the resolver itself (GraphQL refuses one before)', async () => {
    const { schema, loaded } = subgraph();
    const field = schema.getQueryType()!.getFields()['_entities']!;
    const info = { schema, path: { key: '_entities' } } as unknown as Parameters<NonNullable<typeof field.resolve>>[3];
    const answer = (await field.resolve!(undefined, { representations: [null, thing('a')] }, {}, info)) as unknown[];
    expect(answer[0]).toMatchObject({ message: 'Representation 0 must be an object with a __typename.', code: 'BAD_USER_INPUT' });
    expect(await answer[1]).toMatchObject({ id: 'a' });
    expect(loaded).toEqual([thing('a')]);
  });

  it('leaves a schema without federation entities as it is', async () => {
    const empty = new GraphQLSchema({});
    expect(guardEntities(empty)).toBe(empty);
    const plain = buildSchema('type Query { _entities: [String] }');
    plain.getQueryType()!.getFields()['_entities']!.resolve = () => ['kept'];
    expect(guardEntities(plain)).toBe(plain);
    expect((await graphql({ schema: plain, source: '{ _entities }' })).data).toEqual({ _entities: ['kept'] });
    const none = buildSchema('type Query { x: String }');
    expect(guardEntities(none)).toBe(none);
  });
});

describe('@apollo/subgraph alone, whose behaviour the guard corrects (it can go when this fails)', () => {
  it('fails the whole `_entities` list on one unknown __typename, after loading the representations before it', async () => {
    const { schema, loaded } = subgraph(false);
    const result = await run(schema, ENTITIES, { r: [thing('a'), { __typename: 'Nope', id: 'x' }, thing('c')] });
    expect(result.data).toBeNull();
    expect(result.errors).toEqual([expect.objectContaining({ path: ['_entities'] })]);
    expect(loaded).toEqual([thing('a')]);
  });
});
