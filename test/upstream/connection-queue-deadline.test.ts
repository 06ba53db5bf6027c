/**
 * A call waiting for a pooled connection ends with its deadline, not when a connection comes free:
 * undici notices an abort only once it hands the request to a socket, and a connection may be
 * busy far longer than the waiting call has left (another request's call, a live poll).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ByteReservations } from '../../src/lib/byte-reservations.js';
import { createLogger } from '../../src/lib/logger.js';
import { createOperationDeadline } from '../../src/upstream/deadline.js';
import { UpstreamHttp } from '../../src/upstream/http.js';
import { MemoryLog } from '../helpers/memory-log.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A service that holds every answer until told to send it. */
async function heldService() {
  const held: ServerResponse[] = [];
  let seen = 0;
  const server = createServer((_req, res) => {
    seen++;
    held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen: () => seen,
    releaseAll: () => held.splice(0).forEach((res) => res.end('{"ok":true}')),
  };
}

describe('the wait for a pooled connection', { timeout: 15_000 }, () => {
  it("ends with the operation's deadline while the one connection stays busy", async () => {
    const service = await heldService();
    const pool = new Pool(service.url, { connections: 1 });
    closers.push(() => pool.close());
    const http = new UpstreamHttp({
      service: 'content-library',
      baseUrl: service.url,
      dispatcher: pool,
      answerBytes: new ByteReservations(Number.POSITIVE_INFINITY),
      timeoutMs: 10_000,
      retry: { maxRetries: 0, baseDelayMs: 10, maxDelayMs: 10 },
    });
    const log = createLogger({ level: 'debug', destination: new MemoryLog() });
    const request = { route: 'items', method: 'GET' as const, path: '/items', schema: z.unknown() };

    // The first call takes the only connection and keeps it until released.
    let firstSettled = false;
    const first = http.request(request, { log }).finally(() => (firstSettled = true));
    while (service.seen() < 1) await new Promise((resolve) => setTimeout(resolve, 5));

    // The second waits for that connection with 300 ms of its operation left.
    const deadline = createOperationDeadline(300);
    const second = await http
      .request(request, { log, signal: deadline.signal, expiresAt: deadline.expiresAt })
      .catch((error: unknown) => error);
    deadline.dispose();

    expect(second).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', message: expect.stringMatching(/timed out/) });
    // It ended while the connection it waited for was still busy, and never reached the service.
    expect(firstSettled).toBe(false);
    expect(service.seen()).toBe(1);
    service.releaseAll();
    await expect(first).resolves.toMatchObject({ value: { ok: true } });
  });
});
