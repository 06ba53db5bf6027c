/**
 * What undici does on its own, that src/upstream/ works around. Each test fails the day undici
 * does it right: then the workaround named beside it can go.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, Pool, RetryAgent } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeServer } from '../../helpers/listen.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listening(handler: RequestListener): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => closeServer(server));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const macrotasks = async (count: number) => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};
const until = async (condition: () => boolean) => {
  while (!condition()) await macrotasks(1);
};

/** Resolves with how the promise settled, without letting it reject unhandled. */
function settlement(promise: Promise<unknown>): { state: () => string; settled: Promise<string> } {
  let state = 'pending';
  const settled = promise.then(
    () => (state = 'resolved'),
    (error: Error) => (state = `rejected: ${error.name}`),
  );
  return { state: () => state, settled };
}

describe("undici's wait for a pooled connection (http.ts, untilAborted)", () => {
  it('rejects a request aborted while it waits only once the busy connection frees', { timeout: 5000 }, async () => {
    const held: { end: (body: string) => void }[] = [];
    const origin = await listening((_request, response) => held.push(response));
    const pool = new Pool(origin, { connections: 1 });
    closers.push(() => pool.destroy());
    const first = pool.request({ path: '/first', method: 'GET' });
    await until(() => held.length === 1);

    const aborter = new AbortController();
    const second = settlement(pool.request({ path: '/second', method: 'GET', signal: aborter.signal }));
    aborter.abort();
    await macrotasks(3);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(second.state()).toBe('pending');

    held[0]!.end('done');
    await (await first).body.text();
    expect(await second.settled).toBe('rejected: AbortError');
    expect(held).toHaveLength(1);
  });
});

describe("undici's RetryAgent (retry.ts)", () => {
  it('waits out the whole Retry-After after its caller aborts, and only then rejects', { timeout: 5000 }, async () => {
    let seen = 0;
    const origin = await listening((_request, response) => {
      seen++;
      response.writeHead(503, { 'retry-after': '1' }).end();
    });
    const agent = new RetryAgent(new Agent(), { maxRetries: 1 });
    closers.push(() => agent.destroy());
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const aborter = new AbortController();
    const call = settlement(agent.request({ origin, path: '/', method: 'GET', signal: aborter.signal }));
    // The wait is a plain timer of the Retry-After's length: once it is set, the call is waiting.
    await until(() => timers.mock.calls.some(([, delay]) => delay === 1000));

    aborter.abort();
    await macrotasks(3);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(call.state()).toBe('pending');
    expect(await call.settled).toBe('rejected: AbortError');
    expect(seen).toBe(1);
  });

  it('backs off by exactly minTimeout·2ⁿ on every call: no jitter', { timeout: 5000 }, async () => {
    const origin = await listening((_request, response) => response.writeHead(503).end());
    const agent = new RetryAgent(new Agent(), { maxRetries: 3, minTimeout: 4, timeoutFactor: 2 });
    closers.push(() => agent.destroy());
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const backoffs = async () => {
      timers.mockClear();
      await expect(agent.request({ origin, path: '/', method: 'GET' })).rejects.toMatchObject({ statusCode: 503 });
      // The connection's own timers are counted in seconds.
      return timers.mock.calls.map(([, delay]) => delay).filter((delay) => delay! < 1000);
    };
    expect(await backoffs()).toEqual([4, 8, 16]);
    expect(await backoffs()).toEqual([4, 8, 16]);
  });
});
