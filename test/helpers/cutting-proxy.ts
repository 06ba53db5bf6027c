/**
 * A TCP proxy in front of an upstream that cuts the first connections it gets once their request
 * arrives, before any answer: `close` as a keep-alive peer that went away ("other side closed"),
 * `reset` with a TCP RST (ECONNRESET). Later connections pass through untouched.
 */
import net, { type AddressInfo } from 'node:net';

export interface CuttingProxy {
  readonly url: string;
  /** Connections cut so far. */
  cuts(): number;
  /** Cut the next `count` connections. */
  cutNext(count: number, how: 'close' | 'reset'): void;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  let pending = 0;
  let how: 'close' | 'reset' = 'close';
  let cuts = 0;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    client.once('data', (head) => {
      if (pending > 0) {
        pending--;
        cuts++;
        if (how === 'reset') client.resetAndDestroy();
        else client.destroy();
        return;
      }
      const upstream = net.connect(Number(port), hostname, () => {
        upstream.write(head);
        client.pipe(upstream).pipe(client);
      });
      sockets.add(upstream);
      upstream.on('close', () => {
        sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => upstream.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cuts: () => cuts,
    cutNext(count, mode) {
      pending = count;
      how = mode;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
