/**
 * The shared store against a real redis-server: values round-trip, anything the gateway did not
 * write is a miss, the fill lock, and Redis down at start, killed, stalled and back: calls are
 * misses, one warn line per outage, one info line when back, gateway_redis_up follows.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig, type RedisConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { createMetrics } from '../../src/gateway/plugins/observability/metrics.js';
import { createSharedStore, SharedStore } from '../../src/upstream/shared-store/store.js';
import { MemoryLog } from '../helpers/memory-log.js';
import { redisServerForSuite, skipWithoutRedis } from './redis-server.js';

const skip = skipWithoutRedis('shared store');

function storeOn(url: string, keyPrefix = 'test:') {
  const memory = new MemoryLog();
  const log = createLogger({ level: 'debug', destination: memory });
  const config: RedisConfig = { url, keyPrefix, timeoutMs: 300, liveLeaseMs: 15_000 };
  const store = new SharedStore(config, log);
  const lines = (level: number) => memory.lines().filter((line) => line.level === level && /Redis/.test(String(line.msg)));
  return { store, memory, warnings: () => lines(40), infos: () => lines(30) };
}

const waitUntil = (check: () => boolean) => vi.waitFor(() => expect(check()).toBe(true), { timeout: 5000, interval: 20 });

describe('configuration', () => {
  it('has no Redis without REDIS_URL, and nothing is created', () => {
    const config = loadConfig({});
    expect(config.redis).toBeUndefined();
    expect(createSharedStore(config.redis, createLogger({ level: 'silent' }))).toBeUndefined();
  });

  it('reads REDIS_URL with its defaults, and refuses another scheme without echoing the URL', () => {
    expect(loadConfig({ REDIS_URL: 'rediss://gw:pw@redis.example:6380/2' }).redis).toEqual({
      url: 'rediss://gw:pw@redis.example:6380/2',
      keyPrefix: 'gateway:',
      timeoutMs: 500,
      liveLeaseMs: 15_000,
    });
    expect(
      loadConfig({ REDIS_URL: 'redis://r:6379', REDIS_KEY_PREFIX: 'gw-a:', REDIS_TIMEOUT_MS: '200', AUDIT_LIVE_LEASE_MS: '5000' }).redis,
    ).toMatchObject({ keyPrefix: 'gw-a:', timeoutMs: 200, liveLeaseMs: 5000 });
    expect(() => loadConfig({ REDIS_URL: 'http://user:hunter2@r:6379' })).toThrow(/REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => loadConfig({ REDIS_URL: 'http://user:hunter2@r:6379' })).not.toThrow(/hunter2/);
    expect(() => loadConfig({ REDIS_URL: 'redis://r', REDIS_KEY_PREFIX: 'a b' })).toThrow(/REDIS_KEY_PREFIX/);
  });
});

describe.skipIf(skip)('shared store on a real Redis', { timeout: 20_000 }, () => {
  const redis = redisServerForSuite({ user: { name: 'gateway', password: 'redis-acl-password' } });
  let raw: Redis;
  let subject: ReturnType<typeof storeOn>;
  beforeAll(async () => {
    raw = new Redis(redis.url, { lazyConnect: true });
    // Reconnects by itself after the fault tests; their connection errors are expected.
    raw.on('error', () => undefined);
    await raw.connect();
    subject = storeOn(redis.url);
    await waitUntil(() => subject.store.isUp());
  });
  afterAll(async () => {
    await subject?.store.close();
    raw?.disconnect();
  });
  afterEach(() => redis.resume());

  it('logs in as an ACL user and reads back what it stored', async () => {
    const { store } = subject;
    expect(await store.set(store.key('k1'), 'doc', 'hello {world}: ok', 10_000)).toBe(true);
    expect(await store.get(store.key('k1'), 'doc')).toBe('hello {world}: ok');
    expect(await raw.pttl('test:k1')).toBeGreaterThan(0);
    expect(await store.get(store.key('absent'), 'doc')).toBeUndefined();
  });

  it('reads anything it did not write as a miss: foreign, corrupted, truncated, another kind, another key', async () => {
    const { store } = subject;
    await store.set(store.key('good'), 'doc', 'the document', 10_000);
    const sealed = (await raw.get('test:good'))!;
    const cases: Record<string, string> = {
      foreign: 'plain text someone else wrote',
      json: '{"query":"{ __typename }"}',
      corrupted: sealed.replace('document', 'dokument'),
      truncated: sealed.slice(0, -3),
      empty: '',
      tagOnly: 'gw1:doc:',
    };
    for (const [name, value] of Object.entries(cases)) await raw.set(`test:${name}`, value);
    for (const name of Object.keys(cases)) expect(await store.get(store.key(name), 'doc'), name).toBeUndefined();
    await raw.set('test:copied', sealed);
    expect(await store.get(store.key('copied'), 'doc')).toBeUndefined();
    expect(await store.get(store.key('good'), 'page')).toBeUndefined();
    await raw.hset('test:hash', 'f', 'v');
    expect(await store.get(store.key('hash'), 'doc')).toBeUndefined();
    expect(await store.get(store.key('good'), 'doc')).toBe('the document');
  });

  it('gives a lock to one holder at a time, released only by its own token', async () => {
    const { store } = subject;
    const first = await store.lock(store.key('lock'), 10_000);
    expect(first.outcome).toBe('acquired');
    expect(await store.lock(store.key('lock'), 10_000)).toEqual({ outcome: 'held' });
    await store.unlock(store.key('lock'), 'not-the-token');
    expect(await raw.exists(store.key('lock'))).toBe(1);
    await store.unlock(store.key('lock'), (first as { token: string }).token);
    expect(await raw.exists(store.key('lock'))).toBe(0);
    expect((await store.lock(store.key('lock'), 10_000)).outcome).toBe('acquired');
  });

  it('answers a miss past its deadline when Redis stalls, and counts that as an outage', async () => {
    const { store, warnings } = storeOn(redis.url);
    await waitUntil(() => store.isUp());
    await store.set(store.key('stall'), 'doc', 'x', 10_000);
    redis.pause();
    expect(await store.get(store.key('stall'), 'doc')).toBeUndefined();
    expect(store.isUp()).toBe(false);
    expect(warnings()).toHaveLength(1);
    redis.resume();
    await vi.waitFor(async () => expect(await store.get(store.key('stall'), 'doc')).toBe('x'), { timeout: 5000, interval: 50 });
    expect(store.isUp()).toBe(true);
    await store.close();
  });

  it('survives Redis killed and restarted: misses meanwhile, one warn, one info, the gauge follows', async () => {
    const { store, warnings, infos } = storeOn(redis.url);
    const metrics = createMetrics();
    metrics.observeSharedStore(store);
    const gauge = async () => (await metrics.registry.getSingleMetric('gateway_redis_up')!.get()).values[0]?.value;
    await waitUntil(() => store.isUp());
    expect(await gauge()).toBe(1);
    await store.set(store.key('before'), 'doc', 'x', 10_000);

    await redis.kill();
    await waitUntil(() => !store.isUp());
    for (let i = 0; i < 20; i++) {
      expect(await store.get(store.key('before'), 'doc')).toBeUndefined();
      expect(await store.set(store.key('during'), 'doc', 'y', 10_000)).toBe(false);
      expect((await store.lock(store.key('during-lock'), 1000)).outcome).toBe('unavailable');
    }
    expect(await gauge()).toBe(0);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).not.toHaveProperty('err');

    await redis.start();
    await waitUntil(() => store.isUp());
    expect(await gauge()).toBe(1);
    expect(infos()).toHaveLength(1);
    expect(warnings()).toHaveLength(1);
    expect(await store.set(store.key('after'), 'doc', 'z', 10_000)).toBe(true);
    expect(await store.get(store.key('after'), 'doc')).toBe('z');
    await store.close();
  });

  it('never writes the password of its URL into a log line', async () => {
    const { store, memory } = storeOn(redis.url);
    await waitUntil(() => store.isUp());
    await redis.kill();
    await waitUntil(() => !store.isUp());
    await redis.start();
    await waitUntil(() => store.isUp());
    expect(memory.text()).not.toContain('redis-acl-password');
    expect(memory.text()).toContain(`127.0.0.1:${redis.port}`);
    await store.close();
  });
});

describe('shared store without a Redis to reach', { timeout: 20_000 }, () => {
  it('answers misses at once, logs one warn line, and reads 0 on the gauge', async () => {
    // A port nothing listens on: the connection is refused.
    const { store, warnings } = storeOn('redis://127.0.0.1:1');
    const metrics = createMetrics();
    metrics.observeSharedStore(store);
    await waitUntil(() => warnings().length > 0);
    for (let i = 0; i < 10; i++) expect(await store.get(store.key('k'), 'doc')).toBeUndefined();
    expect(warnings()).toHaveLength(1);
    expect((await metrics.registry.getSingleMetric('gateway_redis_up')!.get()).values[0]?.value).toBe(0);
    await store.close();
  });
});
