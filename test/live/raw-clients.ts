/**
 * Clients below graphql-sse and graphql-ws, for what those libraries never do: subscribe and
 * complete thousands of times on one WebSocket.
 */
import WebSocket from 'ws';
import { API_KEY, sleep } from './live-server.js';

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
