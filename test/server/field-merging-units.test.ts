/**
 * The work of checking that fields merge (src/gateway/plugins/limits/field-merging.ts), counted from the document
 * alone: every legitimate use of this schema is well within the limit, repeated fields past it are
 * found without walking further. The plugin in a Yoga of its own: a document over the limit
 * refused, one merge rule, `@stream` compared where fields meet. The gateway's answers:
 * field-merging.test.ts.
 */
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { parse } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { fieldMergeCheck, useFieldMergeLimit } from '../../src/gateway/plugins/limits/field-merging.js';
import { operationLimits } from '../../src/gateway/plugins/limits/operation-limits.js';
import { fullPage, legitimate, repeatedFields, words } from '../helpers/field-merging-documents.js';

const LIMIT = operationLimits.maxFieldMergeWork;
const work = (document: string, limit = Number.MAX_SAFE_INTEGER) => fieldMergeCheck(parse(document), limit).work;

describe('the work of merging fields', () => {
  it('counts each selection collected and each pair of fields that share a response key, at each place in the response', () => {
    expect(work('{ a b c }')).toBe(3);
    expect(work(`{ ${words(3990, (i) => `f${i}`)} }`)).toBe(3990);
    expect(work('{ a a a }')).toBe(3 + 3);
    expect(work('{ x: a x: b }')).toBe(2 + 1);
    // Two `a` at the root, and their `b`s meet below them.
    expect(work('{ a { b } a { b } }')).toBe(2 + 1 + (2 + 1));
    // Inline fragments merge into their set.
    expect(work('{ a ... on Query { a } }')).toBe(3 + 1);
  });

  it("compares a fragment's own fields once, within the fragment, wherever it is spread", () => {
    const inline = work(`{ ${words(30, (i) => `p${i}: auditEvents { ${fullPage} }`)} }`);
    const throughFragment = work(`{ ${words(30, (i) => `p${i}: auditEvents { ...Page }`)} } fragment Page on AuditEventConnection { ${fullPage} }`);
    const page = work(`fragment Page on AuditEventConnection { ${fullPage} }`);
    expect(inline).toBeGreaterThan(30 * page);
    expect(throughFragment).toBeLessThan(2 * page);
  });

  it('counts the fields a fragment brings against each other within the fragment only, however deep it spreads another', () => {
    // Within F: 2 selections and their pair. In the operation: the spread, F's 2 fields collected,
    // and each against the spread beside it; their pair was compared within F.
    expect(work('fragment F on Query { a a }')).toBe(2 + 1);
    expect(work('{ ...F } fragment F on Query { a a }')).toBe(2 + 1 + (1 + 2 + 2));
    // G's `a` reaches the operation through F: it was compared with F's own `a` within F. Within
    // G: its field. Within F: 3 selections collected, its 2 fields against the spread, their pair.
    // In the operation: 4 selections collected, the 2 fields against the 2 spreads, the pair of
    // spreads, and no pair of fields.
    const withinFragments = work('fragment F on Query { a ...G } fragment G on Query { a }');
    expect(withinFragments).toBe(1 + (3 + 2 + 1));
    expect(work('{ ...F } fragment F on Query { a ...G } fragment G on Query { a }') - withinFragments).toBe(4 + 2 * 2 + 1);
  });

  it('counts each pair of fragments spread together once', () => {
    // Each fragment: its field. The operation: 2 spreads and 2 fields collected, each field against
    // the 2 spreads, and the one pair of spreads.
    expect(work('{ ...F0 ...F1 } fragment F0 on Query { f0 } fragment F1 on Query { f1 }')).toBe(1 + 1 + (4 + 2 * 2 + 1));
  });

  it('skips a spread of a fragment the document lacks, and definitions that are not executable (validation refuses both)', () => {
    expect(work('{ ...Missing a }')).toBe(2 + 1);
    expect(work('{ a } type T { b: Int }')).toBe(1);
  });

  it('counts a fragment spread twice in one selection set once, as validation and execution take it', () => {
    expect(work('{ ...F ...F } fragment F on Query { a }')).toBe(work('{ ...F } fragment F on Query { a }') + 1);
  });

  it('counts pairs of fragments spread together, and fields beside fragments', () => {
    const fragments = words(10, (i) => `fragment F${i} on Query { f${i} }`);
    expect(work(`{ ${words(10, (i) => `...F${i}`)} } ${fragments}`)).toBeGreaterThan(45);
    expect(work(`{ ${words(100, (i) => `g${i}`)} ...F0 ...F1 } ${fragments}`)).toBeGreaterThan(200);
  });

  it('ends on a fragment cycle', () => {
    expect(work('{ a { ...F } a { ...G } } fragment F on Query { a { ...G } } fragment G on Query { a { ...F } }', LIMIT)).toBeGreaterThan(LIMIT);
    expect(work('{ ...F } fragment F on Query { ...F a }')).toBeLessThan(20);
  });

  it.each(legitimate)('admits %s', (_, document) => {
    expect(work(document)).toBeLessThanOrEqual(LIMIT);
  });

  it('leaves room beyond the largest legitimate operation', () => {
    expect(Math.max(...legitimate.map(([, document]) => work(document)))).toBeLessThan(LIMIT * 0.9);
  });

  it.each(repeatedFields)('finds %s past the limit', (_, document) => {
    expect(work(document)).toBeGreaterThan(LIMIT);
  });

  it('stops at the first step past the limit, counted from pairs too', () => {
    // 4 selections, then the pair of `a`s (5, the limit) and the pair of `b`s (6).
    expect(work('{ a a b b }', 5)).toBe(6);
    // 3990 selections to collect: it stops collecting at the 101st.
    expect(work(`{ ${words(3990, () => '__typename')} }`, 100)).toBe(101);
    // The probe: 360 selections, then 64,620 pairs found in one step; their 360 `name`s are never collected.
    expect(work(`{ ${words(360, (i) => `updateSessionFiles(updateSessionId: "x${i}") { name }`)} }`, LIMIT)).toBe(360 + (360 * 359) / 2);
  });
});

describe('the field merging plugin', () => {
  const schema = createSchema({
    typeDefs: /* GraphQL */ `
      type Query { a: Int b: Int list: [Int] item: Item }
      type Item { list: [Int] }
    `,
    resolvers: { Query: { a: () => 1, b: () => 2, list: () => [1, 2], item: () => ({ list: [3] }) } },
  });
  const refusal = (maxWork: number) =>
    `The operation repeats fields too often: checking that fields sharing a response key can be merged (fragments included) would take more than ${maxWork} steps, the field merging limit. Ask for each field once.`;
  const differing = (key: string) =>
    `Fields "${key}" conflict because they have differing stream directives. Use different aliases on the fields to fetch both if this was intentional.`;

  /** Made in each test: a plugin made while the file is collected would be made before a mutant is active. */
  function post(query: string, accept: string, maxWork: number) {
    const yoga = createYoga({ schema, logging: false, plugins: [useFieldMergeLimit({ maxWork }), useDeferStream()] });
    return yoga.fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query }),
    });
  }
  async function send(query: string, maxWork = 1000): Promise<{ status: number; body: { data?: unknown; errors?: { message: string; locations?: unknown; extensions?: unknown }[] } }> {
    const response = await post(query, 'application/graphql-response+json', maxWork);
    return { status: response.status, body: (await response.json()) as never };
  }

  it('refuses a document over the limit with GRAPHQL_VALIDATION_FAILED, and admits one at it', async () => {
    // 5 selections and 10 pairs.
    expect(await send('{ a a a a a }', 14)).toEqual({
      status: 400,
      body: { errors: [{ message: refusal(14), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] },
    });
    expect(await send('{ a a a a a }', 15)).toEqual({ status: 200, body: { data: { a: 1 } } });
  });

  it('reports a conflict once: validation runs one OverlappingFieldsCanBeMergedRule', async () => {
    const { body } = await send('{ x: a x: b }');
    expect(body.errors?.map((error) => error.message)).toEqual([
      'Fields "x" conflict because "a" and "b" are different fields. Use different aliases on the fields to fetch both if this was intentional.',
    ]);
  });

  it.each([
    ['streamed and not', '{ list @stream list }', 'list'],
    ['not and streamed', '{ list list @stream }', 'list'],
    ['with different arguments', '{ list @stream(initialCount: 1) list @stream(initialCount: 2) }', 'list'],
    ['with an argument more', '{ list @stream(initialCount: 1) list @stream(initialCount: 1, if: true) }', 'list'],
    ['below fields that merge', '{ item { list @stream } item { list } }', 'list'],
    ['through an alias', '{ x: list @stream x: list }', 'x'],
    ['through a fragment within a fragment', '{ ...F } fragment F on Query { list @stream ...G } fragment G on Query { list }', 'list'],
  ])('refuses fields %s, once, naming both', async (_, query, key) => {
    const { status, body } = await send(query);
    expect(status).toBe(400);
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0]!.message).toBe(differing(key));
    expect(body.errors![0]!.locations).toHaveLength(2);
  });

  it.each([
    ['with the same arguments in another order', '{ list @stream(initialCount: 1, if: true) list @stream(if: true, initialCount: 1) }'],
    ['streamed alike', '{ list @stream list @stream }'],
    ['streamed alike, one with another directive before its stream', '{ list @include(if: true) @stream list @stream }'],
    ['neither streamed, one with another directive', '{ list @include(if: true) list item { list @stream } }'],
    ['neither streamed, beside a stream elsewhere', '{ list list item { list @stream } }'],
  ])('admits fields %s', async (_, query) => {
    const response = await post(query, 'multipart/mixed', 1000);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"hasNext":false');
    expect(text).not.toContain('"errors"');
  });
});
