/**
 * An operation refused over a WebSocket gets the answer it gets over HTTP: the same message,
 * locations and contract code, through the gateway's masking, and none of the extensions Yoga
 * keeps to itself (`http`). Each is a caller's mistake: nothing is logged above info. The
 * unexpected is masked too, and logged once at error.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveAudit } from '../../src/audit/live/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { attachWebSockets } from '../../src/server/websocket/index.js';
import { MemoryLog, startTestGateway } from '../helpers/gateway.js';
import { closeServer } from '../helpers/listen.js';
import { RawWebSocket } from '../helpers/websocket-frame.js';
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

type Payload = { query: string; operationName?: string; variables?: Record<string, unknown> };
type Errors = { message: string; extensions?: Record<string, unknown> }[];

async function overHttp(payload: Payload): Promise<Errors> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': API_KEY },
    body: JSON.stringify(payload),
  });
  return ((await response.json()) as { errors: Errors }).errors;
}

/** The errors the operation was sent: its `error` message, or the errors of its `next`. */
async function overWebSocket(id: string, payload: Payload): Promise<{ type: string; errors: Errors }> {
  const socket = await connections.open(server);
  socket.sendMessage({ id, type: 'subscribe', payload });
  const answer = (await settledOperation(socket, id)).find((m: WsMessage) => m.type === 'error' || m.type === 'next')!;
  const errors = answer.type === 'error' ? (answer.payload as Errors) : (answer.payload as { errors: Errors }).errors;
  return { type: answer.type, errors };
}

const DATE_QUERY = 'query Dated($to: DateTime) { auditEvents(first: 1, filter: { to: $to }) { totalCount } }';

const refused: [string, Payload, string][] = [
  ['several operations and no operationName', { query: 'query A { __typename } query B { __typename }' }, 'BAD_REQUEST'],
  ['an operationName the document lacks', { query: 'query A { __typename }', operationName: 'B' }, 'BAD_REQUEST'],
  ['a document without an operation', { query: 'fragment F on Query { __typename }' }, 'BAD_REQUEST'],
  ['a syntax error', { query: '{ __typename' }, 'GRAPHQL_PARSE_FAILED'],
  ['an unknown field', { query: '{ noSuchField }' }, 'GRAPHQL_VALIDATION_FAILED'],
  ['an operation type the schema lacks', { query: 'mutation { x }' }, 'GRAPHQL_VALIDATION_FAILED'],
  ['a variable that does not coerce', { query: DATE_QUERY, variables: { to: 'x' } }, 'BAD_USER_INPUT'],
  ['a required variable not given', { query: 'query Sized($n: Int!) { auditEvents(first: $n) { totalCount } }' }, 'BAD_USER_INPUT'],
  [
    "a subscription's variable that does not coerce",
    { query: 'subscription Live($since: DateTime) { auditEventAdded(since: $since) { __typename } }', variables: { since: 'x' } },
    'BAD_USER_INPUT',
  ],
];

describe('an operation refused over a WebSocket', () => {
  it.each(refused)('%s: the answer HTTP gives, with its contract code and no `http` extension', async (name, payload, code) => {
    const before = server.logs().length;
    const { errors } = await overWebSocket(name, payload);
    expect(errors.map((e) => e.extensions?.code)).toEqual([code]);
    expect(JSON.stringify(errors)).not.toMatch(/"http"|"unexpected"/);
    expect(errors).toEqual(await overHttp(payload));
    const written = server.logs().slice(before);
    expect(written.filter((l) => (l.level as number) > 30)).toEqual([]);
    expect(written.find((l) => l.msg === 'websocket operation' && l.operationId === name)).toMatchObject({ errors: [code] });
  });

  it('is sent as an `error` message when it never ran, as a `next` with its errors when it ran', async () => {
    expect((await overWebSocket('ambiguous', refused[0]![1])).type).toBe('error');
    expect((await overWebSocket('bad-variable', refused[6]![1])).type).toBe('next');
  });
});

describe('an unexpected failure while an operation over a WebSocket is run', () => {
  it('is sent masked as INTERNAL_SERVER_ERROR, logged once at error, and the connection carries on', async () => {
    const gateway = await startTestGateway();
    const { yoga } = gateway;
    // The request of this operation fails in a way no plugin answers.
    const failing = async (request: Request, context?: object) => {
      if ((await request.clone().text()).includes('fails')) throw new TypeError('a detail for the log only');
      return yoga.fetch(request, context ?? {});
    };
    const failingYoga = new Proxy(yoga, { get: (target, name) => (name === 'fetch' ? failing : Reflect.get(target, name)) });
    const server = createServer((request, response) => void yoga(request, response));
    const noLiveAudit = { close: () => undefined } as unknown as LiveAudit;
    const webSocketLog = new MemoryLog();
    const log = createLogger({ level: 'info', destination: webSocketLog });
    const webSockets = attachWebSockets(server, { yoga: failingYoga, liveAudit: noLiveAudit, log, maxPayloadBytes: 65_536 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const socket = await RawWebSocket.open((server.address() as AddressInfo).port, {});
      socket.sendMessage({ id: 'fails', type: 'subscribe', payload: { query: '{ fails: __typename }' } });
      socket.sendMessage({ id: 'next', type: 'subscribe', payload: { query: '{ __typename }' } });
      expect(await settledOperation(socket, 'fails')).toEqual([
        { id: 'fails', type: 'error', payload: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] },
      ]);
      expect((await settledOperation(socket, 'next')).map((m) => m.type)).toEqual(['next', 'complete']);
      const errors = [...gateway.logs(), ...webSocketLog.lines()].filter((l) => (l.level as number) >= 50);
      expect(errors).toMatchObject([{ msg: 'unexpected error', err: { message: 'a detail for the log only' } }]);
      socket.socket.destroy();
    } finally {
      await webSockets.close();
      await closeServer(server);
      await gateway.close();
    }
  });
});
