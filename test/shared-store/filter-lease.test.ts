/**
 * A live filter's lease and fenced stream on a real Redis: one holder at a time, renewed while
 * held, taken over once it lapses, and a former holder cannot append after that.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import { FilterLease } from '../../src/upstream/shared-store/filter-lease.js';
import { SharedStore } from '../../src/upstream/shared-store/store.js';
import { redisServerForSuite, skipWithoutRedis } from './redis-server.js';

const skip = skipWithoutRedis('live filter lease');

describe.skipIf(skip)('live filter lease', { timeout: 20_000 }, () => {
  const redis = redisServerForSuite();
  let replicas: SharedStore[];
  let raw: Redis;
  const log = createLogger({ level: 'silent' });
  let filters = 0;
  /** A filter of its own per test; a lease of it on each replica. */
  const leasesOf = (leaseMs: number) => {
    const filter = JSON.stringify({ objectType: 'LOGIN', test: ++filters });
    return replicas.map((store) => new FilterLease(store, filter, leaseMs));
  };
  const entries = async (lease: FilterLease) => (await raw.xrange(lease.streamKey, '-', '+')).map(([, fields]) => fields[1]);

  beforeAll(async () => {
    replicas = [0, 1].map(() => new SharedStore({ url: redis.url, keyPrefix: 'lease-test:', timeoutMs: 300, liveLeaseMs: 15_000 }, log));
    raw = new Redis(redis.url);
    raw.on('error', () => undefined);
    await vi.waitFor(() => expect(replicas.every((r) => r.isUp())).toBe(true), { timeout: 5000, interval: 20 });
  });
  afterAll(async () => {
    raw?.disconnect();
    await Promise.all((replicas ?? []).map((r) => r.close()));
  });

  it('names both keys with one hash tag per filter, the same on every replica, another for another filter', () => {
    const [a, b] = leasesOf(1000);
    const tag = /\{[^}]+\}/.exec(a!.leaseKey)![0];
    expect(a!.streamKey).toContain(tag);
    expect(b!.leaseKey).toBe(a!.leaseKey);
    expect(leasesOf(1000)[0]!.leaseKey).not.toBe(a!.leaseKey);
    expect(a!.leaseKey.startsWith('lease-test:')).toBe(true);
  });

  it('gives the lease to one replica at a time, renewed while held and free once released', async () => {
    const [a, b] = leasesOf(10_000);
    expect(await a!.acquire()).toBe(true);
    expect(await b!.acquire()).toBe(false);
    expect(await b!.renew()).toBe(false);
    await raw.pexpire(a!.leaseKey, 500);
    expect(await a!.renew()).toBe(true);
    expect(await raw.pttl(a!.leaseKey)).toBeGreaterThan(500);
    expect(await a!.acquire()).toBe(true);
    await b!.release();
    expect(await b!.acquire()).toBe(false);
    await a!.release();
    expect(await b!.acquire()).toBe(true);
  });

  it('appends in order while the lease is held; a holder whose lease lapsed and was taken over is fenced', async () => {
    const [a, b] = leasesOf(300);
    expect(await a!.acquire()).toBe(true);
    const first = await a!.append(['r1', 'r2'], 0);
    expect(first.outcome === 'appended' && first.ids).toHaveLength(2);
    // a stalls without renewing: its lease lapses and b takes the filter over.
    await vi.waitFor(async () => expect(await b!.acquire()).toBe(true), { timeout: 5000, interval: 50 });
    expect(await a!.append(['stale'], 0)).toEqual({ outcome: 'fenced' });
    expect(await a!.renew()).toBe(false);
    expect(await b!.append(['r3'], 0)).toMatchObject({ outcome: 'appended' });
    expect(await entries(a!)).toEqual(['r1', 'r2', 'r3']);
  });

  it('trims the entries appended before the time asked, keeping the newer ones', async () => {
    const [a] = leasesOf(10_000);
    await a!.acquire();
    for (let i = 0; i < 30; i++) await a!.append(Array.from({ length: 100 }, (_, j) => `r${i}-${j}`), 0);
    expect(await raw.xlen(a!.streamKey)).toBe(3000);
    const [seconds, micros] = await raw.time();
    const afterThem = Number(seconds) * 1000 + Math.ceil(Number(micros) / 1000) + 1;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await a!.append(['newest'], afterThem);
    expect(await raw.xlen(a!.streamKey)).toBeLessThan(200);
    expect((await entries(a!)).at(-1)).toBe('newest');
  });

  it('answers unavailable, never throws, with Redis killed', async () => {
    const [a] = leasesOf(10_000);
    await redis.kill();
    await vi.waitFor(() => expect(replicas[0]!.isUp()).toBe(false), { timeout: 5000, interval: 20 });
    expect(await a!.acquire()).toBe(false);
    expect(await a!.renew()).toBe(false);
    expect(await a!.append(['x'], 0)).toEqual({ outcome: 'unavailable' });
    await redis.start();
    await vi.waitFor(() => expect(replicas[0]!.isUp()).toBe(true), { timeout: 5000, interval: 20 });
    expect(await a!.acquire()).toBe(true);
  });
});
