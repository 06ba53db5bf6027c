/**
 * `@skip` or `@include` on a subscription's root field is refused while validating, as the GraphQL
 * specification says, with GRAPHQL_VALIDATION_FAILED over HTTP POST, SSE and WebSocket alike: a
 * caller's mistake, on the access line as its code and nowhere logged above info.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, startLiveServer, type LiveServer } from './live-server.js';
import { RawConnections, settledOperation, type WsMessage } from './raw-clients.js';

let server: LiveServer;
const connections = new RawConnections();
beforeAll(async () => {
  server = await startLiveServer();
});
afterAll(async () => {
  connections.destroyAll();
  await server.close();
});

type Payload = { query: string; variables?: Record<string, unknown> };
type Errors = { message: string; extensions?: { code?: string } }[];

const ANONYMOUS = 'Anonymous Subscription must not use `@skip` or `@include` directives in the top level selection.';
const NAMED = 'Subscription "Live" must not use `@skip` or `@include` directives in the top level selection.';

const cases: [string, Payload, string][] = [
  ['@skip(if: false)', { query: 'subscription { auditEventAdded @skip(if: false) { __typename } }' }, ANONYMOUS],
  ['@include(if: true)', { query: 'subscription { auditEventAdded @include(if: true) { __typename } }' }, ANONYMOUS],
  [
    '@include with a variable given',
    { query: 'subscription Live($on: Boolean!) { auditEventAdded @include(if: $on) { __typename } }', variables: { on: true } },
    NAMED,
  ],
  [
    '@skip with a variable not given',
    { query: 'subscription Live($off: Boolean!) { auditEventAdded @skip(if: $off) { __typename } }' },
    NAMED,
  ],
  [
    '@skip in a fragment spread at the root',
    { query: 'subscription Live { ...Root } fragment Root on Subscription { auditEventAdded @skip(if: false) { __typename } }' },
    NAMED,
  ],
  ['@include on an inline fragment at the root', { query: 'subscription { ... @include(if: true) { auditEventAdded { __typename } } }' }, ANONYMOUS],
];

async function post(payload: Payload, accept: string): Promise<{ status: number; text: string }> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, 'x-api-key': API_KEY },
    body: JSON.stringify(payload),
  });
  return { status: response.status, text: await response.text() };
}

/** The errors of an SSE answer's first `next` event. */
function sseErrors(text: string): Errors {
  const data = /^event: next\ndata: (.*)$/m.exec(text)?.[1];
  return (JSON.parse(data ?? '{}') as { errors?: Errors }).errors ?? [];
}

/** Only the access line, at info, names the refusal: by its code. */
function expectLoggedAsCode(before: number) {
  const written = server.logs().slice(before);
  expect(written.filter((l) => (l.level as number) > 30)).toEqual([]);
  expect(JSON.stringify(written)).not.toMatch(/"stack"|runtime value/);
  const access = written.filter((l) => l.msg === 'request' || l.msg === 'websocket operation');
  expect(access).toHaveLength(1);
  expect(access[0]).toMatchObject({ errors: ['GRAPHQL_VALIDATION_FAILED'] });
}

describe('@skip or @include on a subscription root field', () => {
  it.each(cases)('%s: refused over HTTP POST as a validation error', async (_case, payload, message) => {
    const otherValidationError = await post({ query: 'subscription { noSuchField }' }, 'application/json');
    const before = server.logs().length;
    const answer = await post(payload, 'application/json');
    expect(answer.status).toBe(otherValidationError.status);
    expect((JSON.parse(answer.text) as { errors: Errors }).errors).toMatchObject([
      { message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
    ]);
    expectLoggedAsCode(before);
  });

  it.each(cases)('%s: refused over SSE as a validation error', async (_case, payload, message) => {
    const before = server.logs().length;
    const answer = await post(payload, 'text/event-stream');
    expect(answer.status).toBe(200);
    expect(sseErrors(answer.text)).toMatchObject([{ message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]);
    expect(answer.text).toMatch(/^event: complete$/m);
    expectLoggedAsCode(before);
  });

  it.each(cases)('%s: refused over WebSocket as a validation error', async (name, payload, message) => {
    const socket = await connections.open(server);
    const before = server.logs().length;
    socket.sendMessage({ id: name, type: 'subscribe', payload });
    const answer = (await settledOperation(socket, name)).find((m: WsMessage) => m.type === 'error');
    expect(answer?.payload).toEqual([
      expect.objectContaining({ message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }),
    ]);
    expectLoggedAsCode(before);
  });
});
