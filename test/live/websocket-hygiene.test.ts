/**
 * What a WebSocket client that does not read can make the gateway hold: pings, fat or many, from
 * sockets that never initialise, queue next to nothing; a socket that does not initialise in time
 * is closed and cut off, read or not; a socket whose queue passes its bound is closed with 1008
 * and cut off.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clientFrame, RawWebSocket } from '../helpers/websocket-frame.js';
import { API_KEY, sleep, startLiveServer, type LiveServer } from './live-server.js';

let server: LiveServer | undefined;
const clients: Socket[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await server?.close();
  server = undefined;
});

async function until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(10);
  }
}

/** A graphql-transport-ws socket whose client writes and never reads a byte. */
async function unreadSocket(live: LiveServer): Promise<Socket> {
  const { port } = new URL(live.url);
  const socket = connect(Number(port), '127.0.0.1');
  clients.push(socket);
  socket.on('error', () => {});
  socket.pause();
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    'GET /graphql HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n' +
      'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\nsec-websocket-protocol: graphql-transport-ws\r\n\r\n',
  );
  return socket;
}

/** Reads the socket until `text` has come, then pauses it for good. */
async function readUntil(socket: Socket, text: string): Promise<void> {
  let received = '';
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (!received.includes(text)) return;
      socket.off('data', onData);
      socket.pause();
      resolve();
    };
    socket.on('data', onData);
    socket.resume();
  });
}

/** Starts a server whose accepted sockets the test can look at. */
async function startWatched(options: Parameters<typeof startLiveServer>[0]) {
  const accepted: Socket[] = [];
  const live = await startLiveServer({ ...options, onConnection: (socket) => void accepted.push(socket) });
  const serverSideOf = async (client: Socket) => {
    await until(() => accepted.some((s) => s.remotePort === client.localPort), 5000, 'connection accepted');
    return accepted.find((s) => s.remotePort === client.localPort)!;
  };
  return { live, serverSideOf };
}

describe('pings from sockets that never read and never initialise', () => {
  it('make the gateway queue next to nothing, and the sockets are cut off once their time to initialise is over', { timeout: 40_000 }, async () => {
    const { live, serverSideOf } = await startWatched({ connectionInitWaitTimeout: 2000 });
    server = live;
    const ping = clientFrame(JSON.stringify({ type: 'ping', payload: { fat: 'x'.repeat(200 * 1024) } }));
    const sockets = await Promise.all(Array.from({ length: 3 }, () => unreadSocket(live)));
    const serverSides = await Promise.all(sockets.map(serverSideOf));
    for (const socket of sockets) for (let i = 0; i < 20; i++) socket.write(ping);

    // Every ping is in, and has had the time to be answered.
    await until(() => sockets.every((s, i) => serverSides[i]!.bytesRead >= s.bytesWritten), 20_000, 'pings read');
    await sleep(300);
    const queued = serverSides.reduce((sum, s) => sum + s.writableLength, 0);
    // 12 MB of pings: echoed, they would wait there; a pong without payload is 17 bytes.
    expect(queued).toBeLessThan(64 * 1024);

    await until(() => serverSides.every((s) => s.destroyed), 10_000, 'sockets cut off');
  });
});

describe('a socket that does not send connection_init in time', () => {
  it('is closed with 4408 and cut off when its client does not answer the close', async () => {
    server = await startLiveServer({ connectionInitWaitTimeout: 300 });
    // It reads, but never answers a close frame.
    const socket = new RawWebSocket(Number(new URL(server.url).port));
    clients.push(socket.socket);
    await socket.until(() => socket.closeFrame !== undefined);
    expect(socket.closeFrame).toEqual({ code: 4408, reason: 'Connection initialisation timeout' });
    await socket.until(() => socket.closed, 5000);
  });
});

describe('a socket whose client stops reading the answers it asked for', () => {
  it('is closed with 1008 once its queue passes the bound, and cut off', { timeout: 40_000 }, async () => {
    const bound = 256 * 1024;
    const { live, serverSideOf } = await startWatched({ sendQueueBytes: bound });
    server = live;
    const socket = await unreadSocket(live);
    const serverSide = await serverSideOf(socket);
    socket.write(clientFrame(JSON.stringify({ type: 'connection_init', payload: { 'x-api-key': API_KEY } })));
    // Read until acknowledged (a subscribe before that is refused), then never again.
    await readUntil(socket, 'connection_ack');
    // Answers of about 190 KB each (six introspections), never read: 6 MB, more than the kernel's buffers
    // hold for a client that reads nothing (Linux lets a socket's send buffer grow to 4 MB by default).
    const introspection = '__schema { types { name description fields { name description args { name description } } } }';
    const query = `{ ${Array.from({ length: 6 }, (_, i) => `s${i}: ${introspection}`).join(' ')} }`;
    for (let id = 0; id < 32; id++) socket.write(clientFrame(JSON.stringify({ id: String(id), type: 'subscribe', payload: { query } })));

    const closedForQueue = () => live.logs().find((l) => l.msg === 'websocket closed: its client does not read what it is sent');
    await until(() => closedForQueue() !== undefined, 20_000, 'closed for its queue');
    expect(closedForQueue()).toMatchObject({ boundBytes: bound });
    expect(closedForQueue()!.queuedBytes as number).toBeGreaterThanOrEqual(bound);
    await until(() => serverSide.destroyed, 5000, 'socket cut off');
  });
});
