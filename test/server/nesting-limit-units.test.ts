/**
 * The bracket count of the nesting limit (src/gateway/plugins/limits/nesting-limit.ts), and its refusal in a Yoga
 * of its own: no gateway, so that each case costs milliseconds. Over HTTP: nesting-limit.test.ts.
 */
import { Source } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { nestedTooDeeply, useNestingLimit } from '../../src/gateway/plugins/limits/nesting-limit.js';

describe('nestedTooDeeply', () => {
  it('counts brackets, not the characters of strings and comments', () => {
    const limits = { maxNesting: 3, maxTokens: 100 };
    expect(nestedTooDeeply(`{ a(s: "${'['.repeat(50)}") # ${'{'.repeat(50)}\n }`, limits)).toBe(false);
    expect(nestedTooDeeply('{ a { b { c } } }', limits)).toBe(false);
    expect(nestedTooDeeply('{ a { b { c { d } } } }', limits)).toBe(true);
    expect(nestedTooDeeply('{ a } { b } { c { d } }', limits)).toBe(false);
  });

  it('counts every kind of bracket, each opening one level', () => {
    const limits = { maxNesting: 3, maxTokens: 100 };
    // Braces, then parentheses, then lists: four levels each time.
    expect(nestedTooDeeply('{ a { b { c { d } } } }', limits)).toBe(true);
    expect(nestedTooDeeply('{ a { b(x: [1]) } }', limits)).toBe(true);
    expect(nestedTooDeeply('{ a(x: [[1]]) }', limits)).toBe(true);
    expect(nestedTooDeeply('[[[[1]]]]', limits)).toBe(true);
    expect(nestedTooDeeply('{ a(x: [1]) }', limits)).toBe(false);
  });

  it('counts every kind of closing bracket as leaving a level', () => {
    expect(nestedTooDeeply('{ a(x: [1], y: [1], z: [[1]]) }', { maxNesting: 4, maxTokens: 100 })).toBe(false);
    expect(nestedTooDeeply('{ a(x: 1) b(x: 1) c(x: [1]) }', { maxNesting: 3, maxTokens: 100 })).toBe(false);
    expect(nestedTooDeeply('{ a { b } c { d } e { f { g } } }', { maxNesting: 3, maxTokens: 100 })).toBe(false);
  });

  it('reads a Source as it reads its text', () => {
    const limits = { maxNesting: 3, maxTokens: 100 };
    expect(nestedTooDeeply(new Source('{ a { b { c { d } } } }'), limits)).toBe(true);
    expect(nestedTooDeeply(new Source('{ a { b { c } } }'), limits)).toBe(false);
    expect(nestedTooDeeply(new Source(`# ${'{'.repeat(10)}\n{ a }`), limits)).toBe(false);
  });

  it('stops counting where the token limit stops the parser, and at a lexical error', () => {
    const deep = `{ ${'['.repeat(10)}`;
    expect(nestedTooDeeply(deep, { maxNesting: 5, maxTokens: 4 })).toBe(false);
    expect(nestedTooDeeply(deep, { maxNesting: 5, maxTokens: 7 })).toBe(true);
    // The parser reads `maxTokens` tokens and fails on the next one: the limit's last token counts.
    expect(nestedTooDeeply(deep, { maxNesting: 4, maxTokens: 4 })).toBe(false);
    expect(nestedTooDeeply(deep, { maxNesting: 4, maxTokens: 5 })).toBe(true);
    expect(nestedTooDeeply(`{ "unterminated ${'['.repeat(10)}`, { maxNesting: 5, maxTokens: 100 })).toBe(false);
  });
});

describe('useNestingLimit', () => {
  // Made in each test: a plugin made while the file is collected is made before a mutant is active.
  const yoga = () =>
    createYoga({
      schema: createSchema({ typeDefs: 'type Query { a(x: [[[Int]]]): Int }', resolvers: { Query: { a: () => 1 } } }),
      logging: false,
      plugins: [useNestingLimit({ maxNesting: 4, maxTokens: 100 })],
    });
  const post = async (query: string) => {
    const response = await yoga().fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: { message: string }[] } };
  };

  it('refuses a document nested past the limit as a syntax error naming the limit', async () => {
    const { status, body } = await post('{ a(x: [[[1]]]) }');
    expect(status).toBe(400);
    expect(body.errors?.map((e) => e.message)).toEqual(['Syntax Error: The document is nested too deeply (more than 4 levels).']);
  });

  it('parses and runs a document nested to the limit', async () => {
    expect(await post('{ a(x: [[1]]) }')).toEqual({ status: 200, body: { data: { a: 1 } } });
  });
});
