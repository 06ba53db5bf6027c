/**
 * Clients below graphql-sse and graphql-ws, for what those libraries never do: stop reading their
 * socket, or subscribe and complete thousands of times on one WebSocket.
 */
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { RawWebSocket } from '../helpers/websocket-frame.js';
import { API_KEY, LIVE_QUERY, sleep, type LiveServer, type Variables } from './live-server.js';

const hostAndPort = (url: string) => new URL(url);

/** An SSE subscription whose client stops reading its socket after the first bytes. */
export function stalledSse(url: string, variables: Variables = {}): Socket {
  const { hostname, port, pathname } = hostAndPort(url);
  const body = JSON.stringify({ query: LIVE_QUERY, variables });
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  socket.write(
    `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n` +
      `x-api-key: ${API_KEY}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.once('data', () => socket.pause());
  return socket;
}

/** A masked client text frame. */
function frame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([1, 2, 3, 4]);
  const length = payload.length;
  const header =
    length < 126
      ? Buffer.from([0x81, 0x80 | length])
      : Buffer.from([0x81, 0x80 | 126, length >> 8, length & 0xff]);
  return Buffer.concat([header, mask, payload.map((byte, i) => byte ^ mask[i % 4]!)]);
}

/** A graphql-transport-ws subscription whose client stops reading its socket once subscribed. */
export async function stalledWs(url: string, variables: Variables = {}): Promise<Socket> {
  const { hostname, port, pathname } = hostAndPort(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  socket.write(
    `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
  );
  socket.write(frame(JSON.stringify({ type: 'connection_init', payload: { 'x-api-key': API_KEY } })));
  let received = '';
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (!received.includes('connection_ack')) return;
      socket.off('data', onData);
      resolve();
    };
    socket.on('data', onData);
  });
  socket.pause();
  socket.write(frame(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: LIVE_QUERY, variables } })));
  return socket;
}

/** A WebSocket that speaks graphql-transport-ws by hand and keeps every message it gets. */
export async function openRawWs(url: string): Promise<{ socket: WebSocket; messages: { id?: string; type: string }[] }> {
  const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
  const messages: { id?: string; type: string }[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as { type: string }));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-api-key': API_KEY } }));
  while (!messages.some((m) => m.type === 'connection_ack')) await sleep(5);
  return { socket, messages };
}

export type WsMessage = { id?: string; type: string; payload?: unknown };

/** Acknowledged graphql-transport-ws connections to a live server, destroyed together by `destroyAll`. */
export class RawConnections {
  readonly #sockets: RawWebSocket[] = [];

  async open(live: LiveServer): Promise<RawWebSocket> {
    const socket = await RawWebSocket.open(Number(new URL(live.url).port), { 'x-api-key': API_KEY });
    this.#sockets.push(socket);
    return socket;
  }

  destroyAll(): void {
    for (const socket of this.#sockets.splice(0)) socket.socket.destroy();
  }
}

export const wsMessagesOf = (socket: RawWebSocket, id: string) => (socket.messages as WsMessage[]).filter((m) => m.id === id);

export const sendSubscribe = (socket: RawWebSocket, id: string, query: string, operationName?: string) =>
  socket.sendMessage({ id, type: 'subscribe', payload: { query, ...(operationName ? { operationName } : {}) } });

/** The operation's messages once it has its `complete` or `error`. */
export async function settledOperation(socket: RawWebSocket, id: string): Promise<WsMessage[]> {
  await socket.until(() => wsMessagesOf(socket, id).some((m) => m.type === 'complete' || m.type === 'error'), 15_000);
  return wsMessagesOf(socket, id);
}
