/**
 * What an HTTP answer costs the server to count in the memory budget (src/server/counted-response.ts):
 * every answer shares its counting methods, and gives its share back once it is over.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createGatewayServer } from '../../src/server/http-server.js';
import { createMemoryBudget } from '../../src/lib/memory-budget.js';

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
  it('writes through methods shared by every answer, and gives its share of the budget back once over', async () => {
    const budget = createMemoryBudget(limits.maxRequestBytesInFlight);
    const seen: { ownWrite: boolean; ownEnd: boolean }[] = [];
    const body = 'x'.repeat(64 * 1024);
    const { server } = createGatewayServer(
      (_request, response) => {
        response.write(body);
        seen.push({ ownWrite: Object.hasOwn(response, 'write'), ownEnd: Object.hasOwn(response, 'end') });
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
    expect(seen).toHaveLength(2);
    for (const answer of seen) {
      expect(answer.ownWrite).toBe(false);
      expect(answer.ownEnd).toBe(false);
    }
  });
});
