/**
 * The parse cache (src/gateway/plugins/limits/parse-cache.ts): a re-sent document is parsed once, a document that
 * fails validation is not kept, the cache holds no more bytes than its budget, and what it counts
 * for an entry is at least what the entry was measured to cost on the heap.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { GraphQLError, parse } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { operationLimits } from '../../src/gateway/plugins/limits/operation-limits.js';
import { createParseCache, parsedDocumentBytes, parseErrorBytes, tokenCount } from '../../src/gateway/plugins/limits/parse-cache.js';

const schema = createSchema({ typeDefs: 'type Query { hello: String }', resolvers: { Query: { hello: () => 'world' } } });

function server(bytes = { documents: 1024 * 1024, errors: 256 * 1024 }) {
  const cache = createParseCache(bytes);
  let parses = 0;
  const countParses: Plugin = {
    onParse: ({ parseFn, setParseFn }) => setParseFn((source, options) => (parses++, parseFn(source, options))),
  };
  const yoga = createYoga({
    schema,
    logging: false,
    parserAndValidationCache: { documentCache: cache.documents, errorCache: cache.errors },
    plugins: [countParses, cache.forgetInvalidDocuments],
  });
  const send = async (query: string) => {
    const response = await yoga.fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as { data?: unknown; errors?: { message: string }[] };
  };
  return { cache, send, parses: () => parses };
}

describe('parse cache', () => {
  it('parses a re-sent document once', async () => {
    const { send, parses } = server();
    for (let i = 0; i < 3; i++) expect(await send('{ hello }')).toEqual({ data: { hello: 'world' } });
    expect(parses()).toBe(1);
  });

  it('parses a re-sent syntax error once', async () => {
    const { cache, send, parses } = server();
    for (let i = 0; i < 3; i++) expect((await send('{ hello')).errors?.[0]?.message).toMatch(/^Syntax Error/);
    expect(parses()).toBe(1);
    expect(cache.errors.size).toBe(1);
  });

  it('does not keep a document that fails validation', async () => {
    const { cache, send, parses } = server();
    for (let i = 0; i < 3; i++) expect((await send('{ nope }')).errors?.[0]?.message).toMatch(/Cannot query field "nope"/);
    expect(parses()).toBe(3);
    expect(cache.documents.size).toBe(0);
  });

  it('keeps no more bytes than its budget: the oldest documents go first', async () => {
    const { cache, send } = server();
    // 64 KB of comment each: 128 KB counted, so the 1 MB budget keeps seven of them.
    const documents = Array.from({ length: 20 }, (_, i) => `#${i} ${'x'.repeat(64 * 1024)}\n{ hello }`);
    for (const document of documents) await send(document);
    expect(cache.documents.calculatedSize).toBeLessThanOrEqual(1024 * 1024);
    expect(cache.documents.size).toBe(7);
    expect(cache.documents.has(documents[19]!)).toBe(true);
    expect(cache.documents.has(documents[12]!)).toBe(false);
  });
});

describe('what tokens and parse errors are counted for', () => {
  it('counts no tokens for a document parsed without locations, which keeps none', () => {
    expect(tokenCount(parse('{ hello }', { noLocation: true }))).toBe(0);
    expect(tokenCount(parse('{ hello }'))).toBe(5);
  });

  it('counts a token read for each character up to one past the token limit, where the parser stops', () => {
    const text = (length: number) => 'x'.repeat(length);
    const limit = operationLimits.maxTokens + 1;
    const perCharacterBelow = parseErrorBytes(text(limit)) - parseErrorBytes(text(limit - 1));
    const perCharacterPast = parseErrorBytes(text(limit + 1)) - parseErrorBytes(text(limit));
    expect(perCharacterPast).toBeGreaterThan(0);
    expect(perCharacterBelow).toBeGreaterThan(perCharacterPast);
    expect(parseErrorBytes(text(limit + 1000)) - parseErrorBytes(text(limit))).toBe(1000 * perCharacterPast);
  });

  it('keeps syntax errors within their own budget, the oldest going first', async () => {
    const { cache, send } = server({ documents: 1024 * 1024, errors: 3 * parseErrorBytes(`#0 ${'x'.repeat(1000)}\n{ hello`) });
    const broken = Array.from({ length: 5 }, (_, i) => `#${i} ${'x'.repeat(1000)}\n{ hello`);
    for (const text of broken) await send(text);
    expect([...cache.errors.keys()].sort()).toEqual(broken.slice(2).sort());
  });
});

/** A full collection between measurements (vitest's workers have no `gc` of their own). */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap kept by what `make` returns, per item, measured over `count` of them. */
function heapPerItem<T>(count: number, make: (i: number) => T): { items: T[]; bytes: number } {
  gc();
  const before = process.memoryUsage().heapUsed;
  const items = Array.from({ length: count }, (_, i) => make(i));
  gc();
  return { items, bytes: (process.memoryUsage().heapUsed - before) / count };
}

/** Distinct flat strings, as JSON.parse makes them from a request body. */
const texts = (count: number, text: (i: number) => string) => Array.from({ length: count }, (_, i) => JSON.parse(JSON.stringify(text(i))) as string);

describe('what an entry is counted for, against the heap it takes', () => {
  // The densest documents measured: one field name per token (513 bytes each).
  const denseFields = texts(20, (i) => `{ a${i}: hello ${Array(3990).fill('hello').join(' ')} }`);
  // Text costs the heap two bytes per character as soon as one character needs it.
  const wideComments = texts(20, (i) => `#${i} é€ ${'x'.repeat(120_000)}\n{ hello }`);

  it.each([
    ['4000 dense tokens', denseFields],
    ['a long comment with a character beyond Latin-1', wideComments],
  ])('a parsed document of %s', (_, sources) => {
    const { items, bytes } = heapPerItem(sources.length, (i) => ({ text: sources[i]!, document: parse(sources[i]!) }));
    const textBytes = Buffer.byteLength(sources[0]!, 'utf16le');
    const counted = parsedDocumentBytes(items[0]!.text, items[0]!.document);
    expect(tokenCount(items[0]!.document)).toBeGreaterThan(2);
    // The texts were made before the measurement: the document's own heap plus its text.
    expect(counted).toBeGreaterThanOrEqual(bytes + textBytes);
    expect(counted).toBeLessThan(2 * (bytes + textBytes));
  });

  it('a parse error at the 4000-token limit', () => {
    const sources = texts(20, (i) => `{ a${i}: hello ${Array(4100).fill('hello').join(' ')} }`);
    const { items, bytes } = heapPerItem(sources.length, (i) => {
      try {
        return parse(sources[i]!, { maxTokens: 4000 });
      } catch (error) {
        return error as GraphQLError;
      }
    });
    expect(items[0]).toBeInstanceOf(GraphQLError);
    const textBytes = sources[0]!.length;
    expect(parseErrorBytes(sources[0]!)).toBeGreaterThanOrEqual(bytes + textBytes);
    expect(parseErrorBytes(sources[0]!)).toBeLessThan(3 * (bytes + textBytes));
  });
});
