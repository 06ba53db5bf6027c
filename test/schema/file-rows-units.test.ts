/**
 * Update session files the upstream layer could not read (src/gateway/schema/update-sessions.ts),
 * in a Yoga of its own with the row-error plugin: the readable files keep their order, and each
 * unreadable one is an UPSTREAM_INVALID_RESPONSE entry at the list's path naming its position in the
 * upstream's list, at most 50 entries a list and one more that sums up the rest. Over HTTP through
 * the whole gateway: update-session-file-rows.test.ts.
 */
import type { GraphQLResolveInfo } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useRowErrors } from '../../src/gateway/plugins/execution/audit-row-errors.js';
import { readableFiles } from '../../src/gateway/schema/update-sessions.js';
import { MAX_ROW_ERRORS_PER_LIST as MAX_FILE_ERRORS_PER_LIST } from '../../src/gateway/schema/row-errors.js';
import type { FileInfo } from '../../src/upstream/content-library/schemas.js';
import type { UpdateSessionFileRow } from '../../src/upstream/types.js';

/** `count` rows named f0, f1, ...; those at `unreadable` could not be read. */
function rows(count: number, unreadable: readonly number[]): UpdateSessionFileRow[] {
  return Array.from({ length: count }, (_, i) =>
    unreadable.includes(i) ? { ok: false as const } : { ok: true as const, file: { name: `f${i}` } as unknown as FileInfo },
  );
}

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type File { name: String }
    type Session { files(count: Int!, unreadable: [Int!]!): [File!] }
    type Query { files(count: Int!, unreadable: [Int!]!): [File!] sessions: [Session!]! }
  `,
  resolvers: {
    Query: {
      files: (_s: unknown, args: { count: number; unreadable: number[] }, context: object, info: GraphQLResolveInfo) =>
        readableFiles(rows(args.count, args.unreadable), context, info),
      sessions: () => [{}, {}],
    },
    Session: {
      files: (_s: unknown, args: { count: number; unreadable: number[] }, context: object, info: GraphQLResolveInfo) =>
        readableFiles(rows(args.count, args.unreadable), context, info),
    },
  },
});

interface Answer {
  data?: unknown;
  errors?: { message: string; path?: (string | number)[]; locations?: unknown; extensions?: { code?: string } }[];
}

async function post(query: string): Promise<Answer> {
  const yoga = createYoga({ schema, logging: false, plugins: [useRowErrors()] });
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as Answer;
}

const leftOut = (position: number, path: (string | number)[], column: number) => ({
  message: `The update session file at position ${position} of the upstream's list could not be read; it is left out.`,
  locations: [{ line: 1, column }],
  path,
  extensions: { code: 'UPSTREAM_INVALID_RESPONSE' },
});
const names = (...indexes: number[]) => indexes.map((i) => ({ name: `f${i}` }));

describe('unreadable update session files', () => {
  it('serves every file, with no entry, when all were read', async () => {
    expect(await post('{ files(count: 3, unreadable: []) { name } }')).toEqual({ data: { files: names(0, 1, 2) } });
  });

  it('leaves the unreadable files out, the others in order, one entry each naming its upstream position', async () => {
    expect(await post('{ files(count: 5, unreadable: [0, 3]) { name } }')).toEqual({
      data: { files: names(1, 2, 4) },
      errors: [leftOut(0, ['files'], 3), leftOut(3, ['files'], 3)],
    });
  });

  it('puts each entry at the path of its own list, aliases and list items included', async () => {
    expect(await post('{ sessions { mine: files(count: 2, unreadable: [1]) { name } } }')).toEqual({
      data: { sessions: [{ mine: names(0) }, { mine: names(0) }] },
      errors: [leftOut(1, ['sessions', 0, 'mine'], 14), leftOut(1, ['sessions', 1, 'mine'], 14)],
    });
  });

  it('answers an empty list when no file could be read', async () => {
    expect(await post('{ files(count: 2, unreadable: [0, 1]) { name } }')).toEqual({
      data: { files: [] },
      errors: [leftOut(0, ['files'], 3), leftOut(1, ['files'], 3)],
    });
  });

  it('writes at most 50 entries a list, the 50 first, and one more for the rest', async () => {
    expect(MAX_FILE_ERRORS_PER_LIST).toBe(50);
    const all = (count: number) => Array.from({ length: count }, (_, i) => i);

    const fifty = await post(`{ files(count: 51, unreadable: [${all(50).join(',')}]) { name } }`);
    expect(fifty.data).toEqual({ files: names(50) });
    expect(fifty.errors).toEqual(all(50).map((i) => leftOut(i, ['files'], 3)));

    const fiftyOne = await post(`{ files(count: 51, unreadable: [${all(51).join(',')}]) { name } }`);
    expect(fiftyOne.errors).toEqual([
      ...all(50).map((i) => leftOut(i, ['files'], 3)),
      {
        message: "1 more update session files (positions 50 to 50 of the upstream's list) could not be read; they are left out.",
        locations: [{ line: 1, column: 3 }],
        path: ['files'],
        extensions: { code: 'UPSTREAM_INVALID_RESPONSE' },
      },
    ]);

    const many = await post(`{ files(count: 300, unreadable: [${[...all(60), 70, 299].join(',')}]) { name } }`);
    expect(many.errors).toHaveLength(51);
    expect(many.errors?.slice(0, 50)).toEqual(all(50).map((i) => leftOut(i, ['files'], 3)));
    expect(many.errors?.[50]).toEqual({
      message: "12 more update session files (positions 50 to 299 of the upstream's list) could not be read; they are left out.",
      locations: [{ line: 1, column: 3 }],
      path: ['files'],
      extensions: { code: 'UPSTREAM_INVALID_RESPONSE' },
    });
  });
});
