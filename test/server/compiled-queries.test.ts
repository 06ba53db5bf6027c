/**
 * graphql-jit's compiled queries (src/gateway/plugins/compat/jit.ts): an
 * audit operation is compiled the second time it is sent and then served from the cache, each
 * operation of a document runs as itself, one too costly to keep is compiled once and left to
 * graphql-js, and the cache keeps no more bytes than its budget.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCompiledQueries, MAX_COMPILED_FIELDS, useJitForAuditPages, type Compilation } from '../../src/gateway/plugins/compat/jit.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query {
      auditEvents(first: Int!): Page!
      other: String
    }
    type Page {
      rows: [Row!]!
    }
    type Row {
      n: Int!
      label: String!
    }
  `,
  resolvers: {
    Query: {
      auditEvents: (_: unknown, { first }: { first: number }) => ({
        rows: Array.from({ length: first }, (_, n) => ({ n, label: `row ${n}` })),
      }),
      other: () => 'other',
    },
  },
});

function server(maxBytes?: number, maxCompilations?: number) {
  const compilations: Compilation[] = [];
  const compiledQueries = createCompiledQueries(maxBytes, (compilation) => compilations.push(compilation), maxCompilations);
  const yoga = createYoga({ schema, logging: false, plugins: [useJitForAuditPages(compiledQueries)] });
  const send = async (query: string, operationName?: string) => {
    const response = await yoga.fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, operationName }),
    });
    return (await response.json()) as { data?: unknown; errors?: unknown[] };
  };
  return { send, compilations, cache: compiledQueries.cache };
}

const rows = (count: number) => Array.from({ length: count }, (_, n) => ({ n, label: `row ${n}` }));

describe('compiled queries', () => {
  it('compile an audit operation the second time it is sent, then serve it from the cache', async () => {
    const { send, compilations, cache } = server();
    const query = '{ auditEvents(first: 3) { rows { n label } } }';
    expect(await send(query)).toEqual({ data: { auditEvents: { rows: rows(3) } } });
    expect(compilations).toHaveLength(0);
    for (let i = 0; i < 4; i++) expect(await send(query)).toEqual({ data: { auditEvents: { rows: rows(3) } } });
    expect(compilations).toMatchObject([{ operation: '(anonymous)', kept: true }]);
    expect(cache.size).toBe(1);
  });

  it('compile no more operations than the process allows, then leave new ones to graphql-js', async () => {
    const { send, compilations, cache } = server(undefined, 2);
    for (const size of [1, 2, 3]) {
      const query = `{ auditEvents(first: ${size}) { rows { n } } }`;
      for (let i = 0; i < 3; i++) expect(await send(query)).toEqual({ data: { auditEvents: { rows: rows(size).map(({ n }) => ({ n })) } } });
    }
    expect(compilations).toHaveLength(2);
    expect(cache.size).toBe(2);
  });

  it('leave other operations to graphql-js', async () => {
    const { send, compilations } = server();
    for (let i = 0; i < 3; i++) expect(await send('{ other auditEvents(first: 1) { rows { n } } }')).toMatchObject({ data: { other: 'other' } });
    expect(compilations).toHaveLength(0);
  });

  it('run each operation of a document as itself', async () => {
    const { send, compilations } = server();
    const query = 'query A { auditEvents(first: 1) { rows { n } } } query B { auditEvents(first: 2) { rows { label } } }';
    for (let i = 0; i < 3; i++) {
      expect(await send(query, 'A')).toEqual({ data: { auditEvents: { rows: [{ n: 0 }] } } });
      expect(await send(query, 'B')).toEqual({ data: { auditEvents: { rows: [{ label: 'row 0' }, { label: 'row 1' }] } } });
    }
    expect(compilations.map((c) => c.operation).sort()).toEqual(['A', 'B']);
  });

  it('compile an operation too costly to keep once, and leave it to graphql-js', async () => {
    // A budget of 128 KB keeps operations of up to 32 KB: 20 aliases of a page are more.
    const { send, compilations, cache } = server(128 * 1024);
    const aliases = Array.from({ length: 20 }, (_, i) => `p${i}: auditEvents(first: 2) { rows { n label } }`).join(' ');
    for (let i = 0; i < 4; i++) expect(await send(`{ ${aliases} }`)).toMatchObject({ data: { p0: { rows: rows(2) }, p19: { rows: rows(2) } } });
    expect(compilations).toMatchObject([{ kept: false }]);
    expect(compilations[0]!.bytes).toBeGreaterThan(32 * 1024);
    // What is left is the note not to compile it again: the cost of its key.
    expect(cache.size).toBe(1);
    expect(cache.calculatedSize).toBeLessThan(compilations[0]!.bytes! / 10);
  });

  it('leave an operation of more fields than the bound to graphql-js, without compiling it', async () => {
    // `pN: auditEvents(first: 1) { rows { n } }` is three fields.
    const aliases = (count: number) => Array.from({ length: count }, (_, i) => `p${i}: auditEvents(first: 1) { rows { n } }`).join(' ');
    const { send, compilations, cache } = server();
    const atBound = `{ ${aliases(MAX_COMPILED_FIELDS / 3)} }`;
    const overBound = `{ __typename ${aliases(MAX_COMPILED_FIELDS / 3)} }`;
    for (let i = 0; i < 3; i++) {
      expect(await send(atBound)).toMatchObject({ data: { p0: { rows: [{ n: 0 }] } } });
      expect(await send(overBound)).toMatchObject({ data: { __typename: 'Query', p199: { rows: [{ n: 0 }] } } });
    }
    expect(compilations).toMatchObject([
      { fields: MAX_COMPILED_FIELDS, codeCharacters: expect.any(Number) },
      { fields: MAX_COMPILED_FIELDS + 1, kept: false, codeCharacters: undefined, bytes: undefined },
    ]);
    expect(cache.size).toBe(2);
  });

  it('count no compilation for an operation it did not compile', async () => {
    const { send, compilations } = server(undefined, 1);
    const tooLarge = `{ ${Array.from({ length: MAX_COMPILED_FIELDS / 3 + 1 }, (_, i) => `p${i}: auditEvents(first: 1) { rows { n } }`).join(' ')} }`;
    const small = '{ auditEvents(first: 1) { rows { n } } }';
    for (let i = 0; i < 2; i++) {
      await send(tooLarge);
      await send(small);
    }
    expect(compilations).toMatchObject([{ kept: false }, { fields: 3, kept: true }]);
  });

  it('keep no more bytes than the budget: the least recently used operations go first', async () => {
    const budget = 1024 * 1024;
    const { send, compilations, cache } = server(budget);
    const queries = Array.from({ length: 40 }, (_, i) => `{ p${i}: auditEvents(first: 1) { rows { n label } } }`);
    for (const query of queries) {
      await send(query);
      await send(query);
    }
    expect(compilations).toHaveLength(40);
    expect(compilations.every((c) => c.kept)).toBe(true);
    expect(cache.calculatedSize).toBe(compilations.slice(-cache.size).reduce((sum, c) => sum + c.bytes!, 0));
    expect(cache.calculatedSize).toBeLessThanOrEqual(budget);
    expect(cache.calculatedSize).toBeGreaterThan(budget - compilations[39]!.bytes!);
    expect(cache.size).toBeLessThan(40);
    // The first ones were let go: sent again, they are compiled again.
    await send(queries[0]!);
    await send(queries[39]!);
    expect(compilations).toHaveLength(41);
  });
});

describe('the gateway', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  const compilations = () => gateway.logs().filter((line) => String(line['msg']).startsWith('graphql-jit compiled'));

  it('answers thirty aliases of a full audit page through a fragment on graphql-js, and says why', async () => {
    const types = ['LoginEvent', 'LaunchEvent', 'GroupEvent', 'OtherAuditEvent'];
    const query = `query Wide { ${Array.from({ length: 30 }, (_, i) => `p${i}: auditEvents(first: 2) { ...Page }`).join(' ')} }
      fragment Page on AuditEventConnection {
        edges { node { __typename ${types.map((type) => `... on ${type} { ...Record }`).join(' ')} } }
        pageInfo { hasNextPage }
      }
      fragment Record on AuditRecord { uuid timestamp objectType objectAction objectId objectName actor { userName domain } }`;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await gateway.execute(query));
    expect(answers[0]!.errors).toBeUndefined();
    expect(answers[0]!.data.p29.edges).toHaveLength(2);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(compilations().filter((line) => (line['jit'] as Compilation).operation === 'Wide')).toHaveLength(0);
    expect(gateway.logs().filter((line) => line['msg'] === 'operation has too many fields to compile: graphql-js runs it')).toMatchObject([
      { jit: { operation: 'Wide', fields: MAX_COMPILED_FIELDS + 1, kept: false } },
    ]);
  });

  it('compiles a re-sent audit page once, and answers it the same each time', async () => {
    const query = 'query Page { auditEvents(first: 3) { edges { node { __typename ... on LoginEvent { uuid } } } } }';
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await gateway.execute(query));
    expect(answers[0]!.data.auditEvents.edges).toHaveLength(3);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(compilations()).toMatchObject([{ jit: { operation: 'Page', kept: true } }]);
  });

  it('answers a compiled audit page in the order of the document, as graphql-js does', async () => {
    const query = `query Ordered { auditEvents(first: 50) { edges { node { __typename
      ... on AuditRecord { uuid actor { userName } } ... on LoginEvent { success } ... on AuditRecord { objectType } } } } }`;
    const texts = [];
    for (let i = 0; i < 3; i++) texts.push(await (await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    })).text());
    const nodes = (JSON.parse(texts[0]!) as { data: { auditEvents: { edges: { node: Record<string, unknown> }[] } } }).data.auditEvents.edges.map((edge) => edge.node);
    const login = nodes.find((node) => node['__typename'] === 'LoginEvent');
    expect(Object.keys(login!)).toEqual(['__typename', 'uuid', 'actor', 'success', 'objectType']);
    expect(texts[1]).toBe(texts[0]);
    expect(texts[2]).toBe(texts[0]);
    expect(compilations().filter((line) => (line['jit'] as Compilation).operation === 'Ordered')).toHaveLength(1);
  });

  it('answers each operation of a document as itself', async () => {
    const query = 'query A { auditEvents(first: 1) { edges { node { __typename } } } } query B { __typename }';
    const send = (operationName: string) =>
      gateway.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, operationName }),
      }).then((response) => response.json());
    for (let i = 0; i < 3; i++) {
      expect(await send('A')).toMatchObject({ data: { auditEvents: { edges: [{ node: {} }] } } });
      expect(await send('B')).toEqual({ data: { __typename: 'Query' } });
    }
  });
});

describe('graphql-jit 0.8.7 alone (compat/jit.ts puts each selection in a fragment of its own)', () => {
  it("answers a member type's fragment before an interface's, against the document's order", async () => {
    const { compileQuery, isCompiledQuery } = await import('graphql-jit');
    const { buildSchema, parse } = await import('graphql');
    const schema = buildSchema(`interface Record { id: ID }
      type Login implements Record { id: ID success: Boolean }
      union Event = Login
      type Query { event: Event }`);
    const compiled = compileQuery(schema, parse('{ event { ... on Record { id } ... on Login { success } } }'));
    if (!isCompiledQuery(compiled)) throw new Error('not compiled');
    const root = { event: { __typename: 'Login', id: '1', success: true } };
    const answer = (await compiled.query(root, {}, {})) as { data: { event: object } };
    expect(Object.keys(answer.data.event)).toEqual(['success', 'id']);
  });
});
