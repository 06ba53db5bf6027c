/**
 * An HTTP proxy in front of an upstream that holds the requests a test picks until it lets them
 * go: an upstream call stays in flight exactly as long as the test needs, with no latency to tune.
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface HoldingProxy {
  readonly url: string;
  /** Resolves once a held request has arrived (at once if one already has). */
  held(): Promise<void>;
  /** The requests held so far. */
  heldCount(): number;
  /** Forwards the held requests, and every later one. */
  release(): void;
  close(): Promise<void>;
}

export async function startHoldingProxy(target: string, hold: (request: IncomingMessage) => boolean): Promise<HoldingProxy> {
  const { hostname, port } = new URL(target);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const heldOne = new Promise<void>((resolve) => (arrived = resolve));
  const sockets = new Set<Socket>();
  let heldCount = 0;

  const server = createServer((incoming, outgoing) => {
    const forward = () => {
      const upstream = httpRequest({ hostname, port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      upstream.on('error', () => outgoing.destroy());
      incoming.pipe(upstream);
    };
    if (!hold(incoming)) return forward();
    heldCount++;
    arrived();
    void released.then(forward);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => heldOne,
    heldCount: () => heldCount,
    release,
    close() {
      release();
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
