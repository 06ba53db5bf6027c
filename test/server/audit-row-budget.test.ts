/**
 * The audit row budget on its own, in a bare Yoga server: which selections count, how variables,
 * fragments and defaults are read, the exact limits, and large operations taking turns.
 */
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createSchema, createYoga } from 'graphql-yoga';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useAuditRowLimits } from '../../src/gateway/plugins/limits/audit-row-budget.js';
import { multipartParts } from '../clients/incremental-parts.js';

interface Response {
  data?: any;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/**
 * Limits: 10,000 rows per operation; above 60 rows or 3 session lookups an operation is large; one
 * large one at a time.
 */
function server(options: { largeAnswerStallMs?: number } = {}) {
  /** Sizes of the auditEvents fields resolved so far. */
  const resolved: number[] = [];
  /** A field asking for 1001 to 1009 rows waits until released. */
  const held = new Map<number, () => void>();
  /** The representations of the `_entities` fields resolved so far. */
  const looked: string[][] = [];
  const schema = createSchema({
    typeDefs: /* GraphQL */ `
      type Query {
        auditEvents(first: Int, last: Int, after: String): [String!]!
        other(tag: String): String
        _entities(representations: [String!]!): [String]!
        updateSessionFiles(updateSessionId: ID!): [String!]!
        updateSession(id: ID!): String
      }
      type Mutation {
        auditEvents(first: Int): String
      }
    `,
    resolvers: {
      Query: {
        auditEvents: async (_: unknown, args: { first?: number | null; last?: number | null }) => {
          const size = args.first ?? args.last ?? 0;
          resolved.push(size);
          if (size > 1000 && size < 1010) await new Promise<void>((release) => held.set(size, release));
          // 6 MB: more than the kernel's socket buffers take in for a client that reads nothing (Linux
          // lets a socket's send buffer grow to 4 MB by default).
          if (size >= 2000 && size < 3000) return Array.from({ length: 800 }, () => 'x'.repeat(8000));
          return ['row'];
        },
        other: () => 'x',
        _entities: (_: unknown, args: { representations: string[] }) => {
          looked.push(args.representations);
          return args.representations;
        },
        updateSessionFiles: () => ['file'],
        updateSession: (_: unknown, args: { id: string }) => args.id,
      },
      Mutation: { auditEvents: () => 'done' },
    },
  });
  const yoga = createYoga({
    schema,
    plugins: [
      useAuditRowLimits({
        maxRows: 10_000,
        largeOperationRows: 60, largeOperationSessions: 3,
        largeOperationConcurrency: 1,
        largeAnswerStallMs: options.largeAnswerStallMs ?? 60_000,
      }),
      useDeferStream(),
    ],
    logging: false,
  });
  const execute = async (query: string, variables?: Record<string, unknown>, operationName?: string): Promise<Response> => {
    const response = await yoga.fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables, operationName }),
    });
    return (await response.json()) as Response;
  };
  /** Starts an operation whose response comes in parts (multipart/mixed). */
  const executeIncremental = (query: string, signal?: AbortSignal) =>
    yoga.fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({ query }),
      signal,
    });
  return { yoga, execute, executeIncremental, resolved, held, looked };
}

/** Long enough for an operation that is free to run to reach its resolver. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

const refused = (rows: number): Response => ({
  errors: [
    {
      message: `The operation asks for ${rows} audit rows; at most 10000 are served per operation. Page through them instead.`,
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    },
  ],
});

describe('audit row budget', () => {
  it('serves exactly the budget and refuses one row more, before anything resolves', async () => {
    const { execute, resolved } = server();
    expect(await execute('{ a: auditEvents(first: 5000) b: auditEvents(last: 5000) }')).toEqual({ data: { a: ['row'], b: ['row'] } });
    expect(await execute('{ a: auditEvents(first: 5000) b: auditEvents(last: 5000) c: auditEvents(first: 1) }')).toEqual(refused(10_001));
    expect(resolved).toEqual([5000, 5000]);
  });

  it('counts 50 rows for a field without a size (or of size 0), and the larger of first and last', async () => {
    const { execute } = server();
    expect(await execute('{ a: auditEvents(first: 9951) b: auditEvents }')).toEqual(refused(10_001));
    expect(await execute('{ a: auditEvents(first: 9951) b: auditEvents(first: 0) }')).toEqual(refused(10_001));
    expect((await execute('{ a: auditEvents(first: 9950) b: auditEvents }')).errors).toBeUndefined();
    expect(await execute('{ a: auditEvents(first: 1, last: 9000) b: auditEvents(last: 2, first: 1001) }')).toEqual(refused(10_001));
    expect(await execute('{ a: auditEvents(after: "x", first: 9951) b: auditEvents(first: null) }')).toEqual(refused(10_001));
    expect((await execute('{ a: auditEvents(first: null) b: auditEvents(after: "x") }')).errors).toBeUndefined();
  });

  it('reads sizes from variables; a variable that is not given counts as no size', async () => {
    const { execute } = server();
    const query = 'query($n: Int, $m: Int) { a: auditEvents(first: $n) b: auditEvents(last: $m) }';
    expect(await execute(query, { n: 5000, m: 5001 })).toEqual(refused(10_001));
    expect((await execute(query, { n: 5000, m: 5000 })).errors).toBeUndefined();
    expect(await execute(query, { n: 9951 })).toEqual(refused(10_001));
  });

  it('counts the rows whatever the variables that are no page size hold', async () => {
    const { execute, resolved } = server();
    const query = 'query($n: Int, $tag: String) { a: auditEvents(first: $n) b: auditEvents(last: $n) other(tag: $tag) }';
    expect(await execute(query, { n: 5001, tag: 42 })).toEqual(refused(10_002));
    expect(resolved).toEqual([]);
  });

  it('counts fields inside inline and named fragments, nested ones too, each named fragment once', async () => {
    const { execute } = server();
    expect(
      await execute('{ ... on Query { a: auditEvents(first: 5000) } ...F } fragment F on Query { b: auditEvents(first: 5001) }'),
    ).toEqual(refused(10_001));
    expect((await execute('{ ...F ...F } fragment F on Query { a: auditEvents(first: 6000) }')).errors).toBeUndefined();
    expect(
      await execute('{ ...F } fragment F on Query { ...G a: auditEvents(first: 5000) } fragment G on Query { b: auditEvents(first: 5001) }'),
    ).toEqual(refused(10_001));
  });

  it('counts only the operation that runs, and only queries', async () => {
    const { execute } = server();
    const document = 'query Big { a: auditEvents(first: 5000) b: auditEvents(first: 5001) } query Small { auditEvents(first: 1) }';
    expect(await execute(document, undefined, 'Big')).toEqual(refused(10_001));
    expect(await execute(document, undefined, 'Small')).toEqual({ data: { auditEvents: ['row'] } });
    expect(await execute('{ other a: auditEvents(first: 9950) b: auditEvents }')).toEqual({ data: { other: 'x', a: ['row'], b: ['row'] } });
    expect(await execute('mutation { a: auditEvents(first: 9000) b: auditEvents(first: 9000) }')).toEqual({ data: { a: 'done', b: 'done' } });
  });
});

describe('variables that do not coerce', () => {
  it('leave the refusal to execution, which names the variable', async () => {
    const { execute, resolved } = server();
    const response = await execute('query($n: Int) { auditEvents(first: $n) }', { n: 'many' });
    expect(response.data).toBeUndefined();
    expect(response.errors).toHaveLength(1);
    expect(response.errors![0]!.message).toMatch(/^Variable "\$n" got invalid value "many"/);
    expect(resolved).toEqual([]);
  });
});

describe('large operations', () => {
  it('run one at a time, from execution until their response is out, while small ones go straight through', async () => {
    const { execute, resolved, held } = server();
    const first = execute('{ auditEvents(first: 1001) }');
    await vi.waitFor(() => expect(held.has(1001)).toBe(true));
    const second = execute('{ auditEvents(first: 1002) }');
    // Exactly at the threshold is not large: it runs at once.
    expect(await execute('{ auditEvents(first: 60) }')).toEqual({ data: { auditEvents: ['row'] } });
    expect(resolved).toEqual([1001, 60]);

    held.get(1001)!();
    await expect(first).resolves.toEqual({ data: { auditEvents: ['row'] } });
    await vi.waitFor(() => expect(held.has(1002)).toBe(true));
    const third = execute('query($n: Int) { auditEvents(first: $n) }', { n: 1003 });
    held.get(1002)!();
    await expect(second).resolves.toEqual({ data: { auditEvents: ['row'] } });
    await vi.waitFor(() => expect(held.has(1003)).toBe(true));
    held.get(1003)!();
    await expect(third).resolves.toBeDefined();
    expect(resolved).toEqual([1001, 60, 1002, 1003]);
  });

  it('include those looking up more update sessions than the threshold, representations each counted', async () => {
    const { execute, held, looked } = server();
    const first = execute('{ auditEvents(first: 1001) }');
    await vi.waitFor(() => expect(held.has(1001)).toBe(true));

    // Exactly 3 lookups: not large, they run at once, whatever other fields come with them.
    const three = '{ a: updateSessionFiles(updateSessionId: "x") b: updateSession(id: "y") _entities(representations: ["r"]) c: other d: other }';
    expect(await execute(three)).toEqual({ data: { a: ['file'], b: 'y', _entities: ['r'], c: 'x', d: 'x' } });
    expect(await execute('query($r: [String!]!) { _entities(representations: $r) }', { r: ['1', '2', '3'] })).toBeDefined();
    // Four: from a list variable, from a literal list, or over two response keys; each waits its turn.
    const waiting = [
      execute('query($r: [String!]!) { _entities(representations: $r) }', { r: ['1', '2', '3', '4'] }),
      execute('{ _entities(representations: ["5", "6", "7", "8"]) }'),
      execute('{ a: _entities(representations: ["9", "10"]) b: _entities(representations: ["11", "12"]) }'),
    ];
    await settle();
    expect(looked).toEqual([['r'], ['1', '2', '3']]);

    held.get(1001)!();
    await first;
    await expect(Promise.all(waiting)).resolves.toEqual([
      { data: { _entities: ['1', '2', '3', '4'] } },
      { data: { _entities: ['5', '6', '7', '8'] } },
      { data: { a: ['9', '10'], b: ['11', '12'] } },
    ]);
  });

  it('give their turn back when refused or failing, so the next one runs', async () => {
    const { execute, held } = server();
    expect(await execute('{ a: auditEvents(first: 9000) b: auditEvents(first: 9000) }')).toEqual(refused(18_000));
    expect((await execute('{ auditEvents(first: "many") }')).errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const next = execute('{ auditEvents(first: 1001) }');
    await vi.waitFor(() => expect(held.has(1001)).toBe(true));
    held.get(1001)!();
    await expect(next).resolves.toEqual({ data: { auditEvents: ['row'] } });
  });

  it('keep their turn while an incremental response is still being sent, until its last part is out', async () => {
    const { execute, executeIncremental, held, resolved } = server();
    const parts = multipartParts(await executeIncremental('{ ... @defer { auditEvents(first: 1004) } }'));
    expect((await parts.next()).value).toEqual({ data: {}, hasNext: true });
    await vi.waitFor(() => expect(held.has(1004)).toBe(true));

    const next = execute('{ auditEvents(first: 1005) }');
    await settle();
    expect(resolved).toEqual([1004]);

    held.get(1004)!();
    const rest = [];
    for await (const part of parts) rest.push(part);
    expect(rest.at(-1)?.hasNext).toBe(false);
    await vi.waitFor(() => expect(held.has(1005)).toBe(true));
    held.get(1005)!();
    await expect(next).resolves.toEqual({ data: { auditEvents: ['row'] } });
  });

  it('give their turn back as soon as the client of an incremental response goes away', async () => {
    const { execute, executeIncremental, held } = server();
    const client = new AbortController();
    const parts = multipartParts(await executeIncremental('{ ... @defer { auditEvents(first: 1006) } }', client.signal));
    await parts.next();
    await vi.waitFor(() => expect(held.has(1006)).toBe(true));

    // The deferred field is still resolving when the client leaves.
    client.abort();
    const next = execute('{ auditEvents(first: 1007) }');
    await vi.waitFor(() => expect(held.has(1007)).toBe(true));
    held.get(1007)!();
    await expect(next).resolves.toEqual({ data: { auditEvents: ['row'] } });
    held.get(1006)!();
  });

  it('give the turn of an operation run without an HTTP response (WebSocket) back when its request is aborted', async () => {
    const gateway = server();
    const operation = new AbortController();
    const request = new Request('http://yoga.test/graphql', { method: 'POST', signal: operation.signal });
    const enveloped = gateway.yoga.getEnveloped({ request });
    const document = enveloped.parse('{ auditEvents(first: 1013) }');
    await enveloped.execute({ schema: enveloped.schema, document, contextValue: await enveloped.contextFactory() });

    const next = gateway.execute('{ auditEvents(first: 1014) }');
    await settle();
    expect(gateway.resolved).toEqual([1013]);
    operation.abort();
    await expect(next).resolves.toEqual({ data: { auditEvents: ['row'] } });
  });
});

describe('large answers over HTTP', () => {
  let http: Server | undefined;
  afterEach(async () => {
    http?.closeAllConnections();
    await new Promise((closed) => http?.close(closed));
    http = undefined;
  });

  async function listening(gateway: ReturnType<typeof server>) {
    http = createServer(gateway.yoga);
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    const { port } = http.address() as AddressInfo;
    const post = (query: string) =>
      fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      }).then((response) => response.json());
    /** Sends an operation over a connection of its own and never reads the answer. */
    const postUnread = async (query: string, accept = 'application/json'): Promise<Socket> => {
      const body = JSON.stringify({ query });
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      socket.pause();
      socket.write(
        `POST /graphql HTTP/1.1\r\nhost: gateway.test\r\naccept: ${accept}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      return socket;
    };
    return { post, postUnread };
  }

  it('keep their turn until the answer has left, and give it back when its client goes away', async () => {
    const gateway = server();
    const { post, postUnread } = await listening(gateway);
    const unread = await postUnread('{ auditEvents(first: 2000) }');
    await vi.waitFor(() => expect(gateway.resolved).toEqual([2000]));

    const next = post('{ auditEvents(first: 1010) }');
    await settle();
    expect(gateway.resolved).toEqual([2000]);

    unread.destroy();
    await expect(next).resolves.toEqual({ data: { auditEvents: ['row'] } });
    expect(gateway.resolved).toEqual([2000, 1010]);
  });

  it('give their turn back when the client left before the answer was ready', async () => {
    const gateway = server();
    const { post, postUnread } = await listening(gateway);
    const gone = await postUnread('{ auditEvents(first: 1005) }');
    await vi.waitFor(() => expect(gateway.held.has(1005)).toBe(true));
    gone.destroy();
    const next = post('{ auditEvents(first: 1012) }');
    await settle();
    // Its execution goes on, and keeps the turn until it is done.
    expect(gateway.resolved).toEqual([1005]);
    // Answered after its connection closed: no close is left to wait for.
    gateway.held.get(1005)!();
    await expect(next).resolves.toEqual({ data: { auditEvents: ['row'] } });
  });

  it.each([
    ['a JSON answer', '{ auditEvents(first: 2001) }', 'application/json'],
    ['an incremental answer', '{ ... @defer { auditEvents(first: 2001) } }', 'multipart/mixed'],
  ])('drop %s whose client reads nothing for the stall time, so the next one runs', async (_, query, accept) => {
    const gateway = server({ largeAnswerStallMs: 500 });
    const { post, postUnread } = await listening(gateway);
    const unread = await postUnread(query, accept);
    await vi.waitFor(() => expect(gateway.resolved).toEqual([2001]));

    const next = post('{ auditEvents(first: 1011) }');
    await settle();
    expect(gateway.resolved).toEqual([2001]);
    await expect(next).resolves.toEqual({ data: { auditEvents: ['row'] } });
    unread.destroy();
  });
});
