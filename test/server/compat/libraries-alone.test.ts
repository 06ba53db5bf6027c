/**
 * What ws, graphql-ws and whatwg-node do on their own, that src/server/ works around. Each
 * test fails the day its library does it right: then the workaround named beside it can go.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { closeServer } from '../../helpers/listen.js';

let server: Server | undefined;
afterEach(() => server && closeServer(server));

async function listening(handler?: RequestListener): Promise<{ server: Server; port: number }> {
  server = handler ? createServer(handler) : createServer();
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const opened = (socket: WebSocket) => new Promise<void>((resolve, reject) => socket.once('open', resolve).once('error', reject));

describe("graphql-ws's own ws binding (compat/graphql-ws-binding.ts)", () => {
  it('answers a ping with a pong that carries the ping\'s payload back', async () => {
    const { server: http, port } = await listening();
    const wsServer = new WebSocketServer({ server: http, path: '/graphql' });
    const binding = useServer({ schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }) }, wsServer);
    const client = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws');
    try {
      await opened(client);
      const pong = new Promise<unknown>((resolve) => client.once('message', (data) => resolve(JSON.parse(String(data)))));
      client.send(JSON.stringify({ type: 'ping', payload: { fat: 'x'.repeat(1000) } }));
      expect(await pong).toEqual({ type: 'pong', payload: { fat: 'x'.repeat(1000) } });
    } finally {
      client.terminate();
      await binding.dispose();
    }
  });
});

describe("ws's maxPayload alone (compat/websocket-frames.ts)", () => {
  it('closes a socket whose message is too long with 1009 and no reason, as a socket error, once ws reads its header', async () => {
    const { server: http, port } = await listening();
    const wsServer = new WebSocketServer({ server: http, maxPayload: 1024 });
    const serverErrors: unknown[] = [];
    wsServer.on('connection', (socket) => socket.on('error', (error) => serverErrors.push(error)));
    const client = new WebSocket(`ws://127.0.0.1:${port}`);
    try {
      await opened(client);
      const closed = new Promise<[number, string]>((resolve) => client.once('close', (code, reason) => resolve([code, String(reason)])));
      client.send('x'.repeat(2048));
      expect(await closed).toEqual([1009, '']);
      expect(serverErrors).toEqual([expect.objectContaining({ message: 'Max payload size exceeded' })]);
    } finally {
      client.terminate();
      wsServer.close();
    }
  });
});

describe("whatwg-node's own request listener (compat/node-listener.ts)", () => {
  it("answers an error thrown by a plugin's onRequest hook with a 500 whose text body is the stack", async () => {
    const yoga = createYoga({
      schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }),
      logging: false,
      plugins: [
        {
          onRequest() {
            throw new Error('failed at /srv/secret-module.ts');
          },
        },
      ],
    });
    const { port } = await listening(yoga);
    const response = await fetch(`http://127.0.0.1:${port}/graphql?query=%7Bok%7D`);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toMatch(/^Error: failed at \/srv\/secret-module\.ts\n\s+at /);
  });
});

describe("graphql-ws's one record per id (websocket/operations.ts)", () => {
  /** A subscription source that never yields and records whether it was ended. */
  const recordedSource = (sources: { returned: boolean }[]) => {
    const source = { returned: false };
    sources.push(source);
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      next: () => new Promise<IteratorResult<number>>(() => {}),
      return: async () => ((source.returned = true), { done: true as const, value: undefined }),
    };
  };
  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setImmediate(resolve));
  };

  const reused = 'never ends the first stream of an id reused right after complete while its onSubscribe still runs';
  it(reused, { timeout: 5000 }, async () => {
    const sources: { returned: boolean }[] = [];
    const schema = createSchema({
      typeDefs: 'type Query { ok: Boolean } type Subscription { tick: Int }',
      resolvers: { Subscription: { tick: { subscribe: () => recordedSource(sources), resolve: (tick: number) => tick } } },
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let subscribes = 0;
    let closedOnServer!: () => void;
    const serverClosed = new Promise<void>((resolve) => (closedOnServer = resolve));
    const { server: http, port } = await listening();
    const onSubscribe = async () => {
      subscribes++;
      await released;
    };
    const binding = useServer({ schema, onSubscribe, onClose: () => closedOnServer() }, new WebSocketServer({ server: http }));
    const client = new WebSocket(`ws://127.0.0.1:${port}`, 'graphql-transport-ws');
    const send = (message: object) => client.send(JSON.stringify(message));
    try {
      await opened(client);
      const acknowledged = new Promise((resolve) => client.once('message', resolve));
      send({ type: 'connection_init' });
      await acknowledged;
      const subscribe = { id: 'x', type: 'subscribe', payload: { query: 'subscription { tick }' } };
      send(subscribe);
      send({ id: 'x', type: 'complete' });
      send(subscribe);
      await until(() => subscribes === 2);
      release();
      await until(() => sources.length === 2);
      send({ id: 'x', type: 'complete' });
      client.close(1000);
      await serverClosed;
      expect(sources.map((source) => source.returned)).toEqual([false, true]);
    } finally {
      client.terminate();
      await binding.dispose();
    }
  });
});
