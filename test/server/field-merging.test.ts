/**
 * Repeated fields (src/gateway/plugins/limits/field-merging.ts): a document whose fields take too much work to
 * merge is refused as it is parsed, before any validation rule runs, with GRAPHQL_VALIDATION_FAILED
 * over HTTP, SSE and WebSocket alike, and its refusal is kept like a parse error. Validation runs
 * one OverlappingFieldsCanBeMergedRule, graphql-js's, and `@stream` is still compared where fields
 * merge, as the defer plugin's copy of the rule compared it. The counting itself:
 * field-merging-units.test.ts.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { parse, specifiedRules, validate, type GraphQLError, type ValidationRule } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationLimits, useOperationLimits } from '../../src/gateway/plugins/limits/operation-limits.js';
import { createParseCache } from '../../src/gateway/plugins/limits/parse-cache.js';
import { schema } from '../../src/gateway/schema/index.js';
import { repeatedFields, words } from '../helpers/field-merging-documents.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { RawWebSocket } from '../helpers/websocket-frame.js';
import { API_KEY, startLiveServer, type LiveServer } from '../live/live-server.js';

const REFUSAL = `The operation repeats fields too often: checking that fields sharing a response key can be merged (fragments included) would take more than ${operationLimits.maxFieldMergeWork} steps, the field merging limit. Ask for each field once.`;
const refused = { errors: [{ message: REFUSAL, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] };

/** The probe: 13 KB, within every other limit; up to seconds of validation before. */
const probe = (tag: string) => `{ ${words(360, (i) => `updateSessionFiles(updateSessionId: "${tag}${i}") { name }`)} }`;

type Answer = { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };

describe('repeated fields over HTTP', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close());

  const upstreamCalls = () => {
    const c = gw.sim.control.counters();
    return c.token + c.audit + c.session + c.files;
  };

  it.each(repeatedFields)('refuses %s with GRAPHQL_VALIDATION_FAILED, calling no upstream', async (_, query) => {
    gw.sim.control.resetCounters();
    const response = await gw.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(refused);
    expect(upstreamCalls()).toBe(0);
  });

  it('answers a conflict once: validation runs one OverlappingFieldsCanBeMergedRule', async () => {
    expect((await gw.execute('{ a: __typename a: _service { sdl } }')).errors).toEqual([
      {
        message: 'Fields "a" conflict because "__typename" and "_service" are different fields. Use different aliases on the fields to fetch both if this was intentional.',
        locations: [
          { line: 1, column: 3 },
          { line: 1, column: 17 },
        ],
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      },
    ]);
  });
});

describe('a refused document', () => {
  /** The gateway's limits and parse cache, counting parses and validations. */
  function server() {
    const cache = createParseCache();
    const counts = { parses: 0, validations: 0 };
    const counting: Plugin = {
      onParse: ({ parseFn, setParseFn }) => setParseFn((source, options) => (counts.parses++, parseFn(source, options))),
      onValidate: () => void counts.validations++,
    };
    const yoga = createYoga({
      schema,
      logging: false,
      parserAndValidationCache: { documentCache: cache.documents, errorCache: cache.errors },
      // After the limits: it counts every parse, the limits' included.
      plugins: [...useOperationLimits({ largeOperationConcurrency: 4 }), cache.forgetInvalidDocuments, counting],
    });
    const send = async (query: string) => {
      const response = await yoga.fetch('http://yoga.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      return (await response.json()) as Answer;
    };
    return { send, counts };
  }

  it('is never validated, and is parsed once however often it is sent', async () => {
    const { send, counts } = server();
    for (let i = 0; i < 3; i++) expect(await send(probe('x'))).toEqual(refused);
    expect(counts).toEqual({ parses: 1, validations: 0 });
  });

  it('while one within the limit is validated and runs', async () => {
    const { send, counts } = server();
    // 99 selections and 4851 pairs.
    expect(await send(`{ ${words(99, () => '__typename')} }`)).toEqual({ data: { __typename: 'Query' } });
    expect(counts).toEqual({ parses: 1, validations: 1 });
  });
});

describe('repeated fields over SSE and WebSocket', () => {
  let live: LiveServer;
  beforeAll(async () => {
    live = await startLiveServer();
  });
  afterAll(() => live.close());

  it('answers an SSE request with the refusal', async () => {
    const response = await fetch(live.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': API_KEY },
      body: JSON.stringify({ query: probe('sse') }),
    });
    const text = await response.text();
    const events = [...text.matchAll(/^data: (.+)$/gm)].map((match) => JSON.parse(match[1]!) as unknown);
    expect(events[0]).toEqual(refused);
  });

  it('answers a WebSocket subscribe message with the refusal, and keeps the connection', async () => {
    const socket = await RawWebSocket.open(Number(new URL(live.url).port), { 'x-api-key': API_KEY });
    try {
      socket.sendMessage({ id: '1', type: 'subscribe', payload: { query: probe('ws') } });
      await socket.until(() => socket.messages.some((m) => (m as { id?: string }).id === '1'));
      // The same error as over HTTP, without HTTP's status.
      expect(socket.messages.filter((m) => (m as { id?: string }).id === '1')).toEqual([{ id: '1', type: 'error', payload: refused.errors }]);
      socket.sendMessage({ id: '2', type: 'subscribe', payload: { query: '{ __typename }' } });
      await socket.until(() => socket.messages.some((m) => (m as { id?: string; type: string }).id === '2' && (m as { type: string }).type === 'complete'));
      expect(socket.messages).toContainEqual({ id: '2', type: 'next', payload: { data: { __typename: 'Query' } } });
    } finally {
      socket.socket.destroy();
    }
  });
});

/** The defer plugin's copy of OverlappingFieldsCanBeMergedRule, which compares `@stream` too. */
const deferPluginRule = (() => {
  const require = createRequire(import.meta.url);
  const cjs = require.resolve('@graphql-yoga/plugin-defer-stream').replace(/index\.js$/, '');
  return (require(`${cjs}validations/overlapping-fields-can-be-merged.js`) as { OverlappingFieldsCanBeMergedRule: ValidationRule })
    .OverlappingFieldsCanBeMergedRule;
})();

describe('@stream where fields merge', () => {
  /** The gateway's validation: its limits, the defer plugin and graphql-js's rules. */
  const yoga = createYoga({ schema, logging: false, plugins: [...useOperationLimits({ largeOperationConcurrency: 4 }), useDeferStream()] });
  const streamSchema = yoga.getEnveloped().schema;
  const validated = (query: string) => yoga.getEnveloped().validate(streamSchema, parse(query)) as readonly GraphQLError[];
  const merged = (errors: readonly GraphQLError[]) => errors.filter((error) => / conflict because /.test(error.message)).map((error) => error.message);
  const differing = (key: string) =>
    `Fields "${key}" conflict because they have differing stream directives. Use different aliases on the fields to fetch both if this was intentional.`;

  it.each([
    ['streamed and not', '{ auditEvents { edges @stream { cursor } edges { cursor } } }', 'edges'],
    ['with different arguments', '{ auditEvents { edges @stream(initialCount: 1) { cursor } edges @stream(initialCount: 2) { cursor } } }', 'edges'],
    ['through a fragment', '{ auditEvents { edges { cursor } ...Page } } fragment Page on AuditEventConnection { edges @stream { cursor } }', 'edges'],
    ['below fields that merge', '{ x: auditEvents { edges @stream { cursor } } x: auditEvents { edges { cursor } } }', 'edges'],
    ['on members of a union', '{ auditEvents { edges { node { ... on LoginEvent { a: authMethods @stream } ... on LaunchEvent { a: authMethods } } } } }', 'a'],
  ])('refuses fields %s', (_, query, key) => {
    expect(merged(validated(query))).toEqual([differing(key)]);
  });

  it('admits fields that agree, whatever the order of their arguments', () => {
    const query = '{ auditEvents { edges @stream(initialCount: 1, if: true) { cursor } edges @stream(if: true, initialCount: 1) { uuid: cursor } } }';
    expect(validated(query)).toEqual([]);
  });

  it('refuses exactly the documents the defer plugin refused', () => {
    const stream = fc.constantFrom('', '', '', '', '@stream', '@stream(initialCount: 1)', '@stream(if: $b, initialCount: 1)', '@stream(initialCount: 1, if: $b)');
    const key = fc.constantFrom('', '', '', 'a: ');
    const member = fc
      .tuple(fc.constantFrom('LoginEvent', 'LaunchEvent', 'AuditRecord'), key, stream)
      .map(([type, alias, s]) => `... on ${type} { ${type === 'LaunchEvent' ? `${alias}uuid` : `${alias}authMethods ${s}`} }`);
    const node = fc.array(fc.oneof(member, fc.constantFrom('__typename', 'a: uuid', '...Node')), { minLength: 1, maxLength: 3 }).map((s) => s.join(' '));
    const edges = fc.tuple(key, stream, node).map(([alias, s, n]) => `${alias}edges ${s} { cursor node { ${n} } }`);
    const connection = fc.array(fc.oneof(edges, fc.constantFrom('...Page', '... @defer { pageInfo { endCursor } }')), { minLength: 1, maxLength: 3 });
    const operation = fc.array(fc.tuple(fc.constantFrom('', 'x: '), connection), { minLength: 1, maxLength: 2 });
    const document = fc
      .tuple(operation, edges, node)
      .map(
        ([roots, pageEdges, nodeFragment]) =>
          `query ($b: Boolean) { ${roots.map(([alias, c]) => `${alias}auditEvents(first: 1) { ${c.join(' ')} }`).join(' ')} }
           fragment Page on AuditEventConnection { ${pageEdges} }
           fragment Node on AuditEvent { ${nodeFragment.replaceAll('...Node', '__typename')} }`,
      );
    let refusedBefore = 0;
    let onlyStreams = 0;
    fc.assert(
      fc.property(document, (query) => {
        const before = merged(validate(streamSchema, parse(query), [...specifiedRules, deferPluginRule]));
        if (before.length > 0) refusedBefore++;
        if (before.length > 0 && before.every((m) => m.includes('stream'))) onlyStreams++;
        expect(merged(validated(query)).length > 0).toBe(before.length > 0);
      }),
      { numRuns: 100 },
    );
    // About half are refused, most of those for their streams alone.
    expect(refusedBefore).toBeGreaterThan(25);
    expect(refusedBefore).toBeLessThan(75);
    expect(onlyStreams).toBeGreaterThan(12);
  }, 60_000);
});
