/**
 * An HTTP answer counted in the memory budget while it is queued (src/server/http-server.ts):
 * it reaches the client whole, and its share is given back once it is over.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createGatewayServer } from '../../src/server/http-server.js';
import { createMemoryBudget } from '../../src/lib/byte-reservations.js';

const limits = {
  maxConnections: 8,
  maxRequestBytes: 64 * 1024,
  maxRequestBytesInFlight: 1024 * 1024,
  requestTimeoutMs: 5_000,
};

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('an answer counted in the memory budget', () => {
  it('reaches the client whole, and gives its share of the budget back once over', async () => {
    const budget = createMemoryBudget(limits.maxRequestBytesInFlight);
    const body = 'x'.repeat(64 * 1024);
    const { server } = createGatewayServer(
      (_request, response) => {
        response.write(body);
        response.end();
      },
      limits,
      pino({ level: 'silent' }),
      budget,
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => new Promise((resolve) => server.close(() => resolve()));
    const { port } = server.address() as AddressInfo;
    for (let i = 0; i < 2; i++) {
      const received = await new Promise<number>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/', agent: false }, (response) => {
          let bytes = 0;
          response.on('data', (chunk: Buffer) => (bytes += chunk.length)).on('end', () => resolve(bytes)).on('error', reject);
        })
          .on('error', reject)
          .end();
      });
      expect(received).toBe(body.length);
    }
    await expect.poll(() => budget.bytes).toBe(0);
  });
});
