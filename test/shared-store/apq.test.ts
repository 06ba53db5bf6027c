/**
 * Automatic persisted queries shared by replicas through Redis: a hash registered on one gateway
 * runs on another; Redis away or holding something else under the key is a miss the client's
 * retry repairs, never an error.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { simulatorEnv } from '../helpers/simulator-env.js';
import { redisServerForSuite, skipWithoutRedis } from './redis-server.js';
import { startReplica, type Replica } from './replicas.js';

const skip = skipWithoutRedis('persisted queries across replicas');

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
/** A closed window: the default one moves on between two requests, and seeded events leave it. */
const WINDOW = `from: "${new Date(Date.now() - 48 * 3_600_000).toISOString()}", to: "${new Date(Date.now() - 24 * 3_600_000).toISOString()}"`;
/** A document of its own per test, so that no test finds another's registration. */
const documentFor = (name: string) => `query ${name} { auditEvents(first: 1, filter: { ${WINDOW} }) { totalCount } }`;

describe.skipIf(skip)('persisted queries shared by replicas', { timeout: 20_000 }, () => {
  const redis = redisServerForSuite();
  let sim: Simulator;
  let replicas: Replica[];
  let raw: Redis;
  beforeAll(async () => {
    sim = await startSimulator();
    replicas = [0, 1].map(() => startReplica(redis.url, { ...simulatorEnv(sim), REDIS_KEY_PREFIX: 'apq-test:' }));
    raw = new Redis(redis.url);
    raw.on('error', () => undefined);
    await vi.waitFor(() => expect(replicas.every((r) => r.store.isUp())).toBe(true), { timeout: 5000, interval: 20 });
  });
  afterAll(async () => {
    raw?.disconnect();
    await Promise.all((replicas ?? []).map((r) => r.close()));
    await sim?.close();
  });

  it('runs on a second gateway a hash registered on the first', async () => {
    const [a, b] = replicas;
    const query = documentFor('SharedCount');
    const hash = sha256(query);
    expect((await b!.post({ extensions: persisted(sha256(documentFor('NeverRegistered'))) })).errors?.[0]?.extensions?.code).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
    const registered = await a!.post({ query, extensions: persisted(hash) });
    expect(registered.errors).toBeUndefined();
    const onB = await b!.post({ extensions: persisted(hash) });
    expect(onB.errors).toBeUndefined();
    expect(onB.data).toEqual(registered.data);
    expect(await raw.get(`apq-test:apq:${hash}`)).toContain(query);
  });

  it('treats a value under the key that is not the registered document as unknown', async () => {
    const [, b] = replicas;
    const query = documentFor('Tampered');
    const hash = sha256(query);
    await raw.set(`apq-test:apq:${hash}`, 'garbage, not a gateway value');
    expect((await b!.post({ extensions: persisted(hash) })).errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    // Sealed as the gateway seals values, but a document that does not hash to the key.
    await b!.store.set(`apq-test:apq:${hash}`, 'apq', '{ __typename }', 60_000);
    expect((await b!.post({ extensions: persisted(hash) })).errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await b!.post({ query, extensions: persisted(hash) })).errors).toBeUndefined();
    expect((await b!.post({ extensions: persisted(hash) })).errors).toBeUndefined();
  });

  it('keeps answering with Redis killed: an unknown hash is a miss the retry repairs, gauge 0, one warn line', async () => {
    const [a, b] = replicas;
    await redis.kill();
    await vi.waitFor(async () => expect(await b!.redisUp()).toBe(0), { timeout: 5000, interval: 20 });
    const query = documentFor('WhileDown');
    const hash = sha256(query);
    for (let i = 0; i < 3; i++) {
      expect((await b!.post({ extensions: persisted(hash) })).errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    }
    expect((await b!.post({ query, extensions: persisted(hash) })).errors).toBeUndefined();
    expect((await b!.post({ extensions: persisted(hash) })).errors).toBeUndefined();
    expect(b!.logs().filter((line) => line.level === 40 && /Redis is unreachable/.test(line.msg))).toHaveLength(1);

    await redis.start();
    await vi.waitFor(() => expect(a!.store.isUp() && b!.store.isUp()).toBe(true), { timeout: 5000, interval: 20 });
    expect(await b!.redisUp()).toBe(1);
    expect(b!.logs().filter((line) => line.level === 30 && /Redis is reachable again/.test(line.msg))).toHaveLength(1);
    const after = documentFor('AfterRestart');
    expect((await b!.post({ query: after, extensions: persisted(sha256(after)) })).errors).toBeUndefined();
    expect((await a!.post({ extensions: persisted(sha256(after)) })).errors).toBeUndefined();
  });
});
