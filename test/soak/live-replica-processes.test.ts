/**
 * Three gateway processes (src/main.ts) on one Redis and one simulator, subscribed to one filter
 * over SSE: the upstream is read by one of them; every subscriber on every replica gets each record
 * once, in one order; a token resumes on another replica; SIGKILL of the replica that reads hands
 * the filter to another within the lease time; Redis killed and started again mid-stream loses and
 * repeats nothing; nothing secret is written to Redis. The same promises in-process, fast:
 * test/shared-store/live-tail.test.ts.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_USER, startSimulator, type Simulator } from '../../simulator/index.js';
import { runGateway, type GatewayProcess } from '../helpers/process.js';
import { simulatorEnv } from '../helpers/simulator-env.js';
import { subscribeSse, type Received } from '../live/live-server.js';
import { redisServerForSuite, skipWithoutRedis } from '../shared-store/redis-server.js';

const skip = skipWithoutRedis('live tail across replica processes');
const OBJECT_TYPE = 'REPLICA_TEST';
const PREFIX = 'replicas:';
const LEASE_MS = 2000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(skip)('live tail across replica processes', { timeout: 60_000 }, () => {
  const redis = redisServerForSuite();
  let sim: Simulator;
  let gateways: GatewayProcess[] = [];
  let urls: string[] = [];
  const subscriptions: { replica: number; received: Received; stop: () => unknown }[] = [];

  const metric = async (replica: number, pattern: RegExp) => {
    const text = await (await fetch(`${urls[replica]}/metrics`, { signal: AbortSignal.timeout(4000) })).text();
    return [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);
  };
  /** Audit report calls each live replica made (the live tail's polls: nothing else reads it here). */
  const auditReads = (replicas: number[]) =>
    Promise.all(replicas.map((r) => metric(r, /^gateway_upstream_request_duration_seconds_count\{[^}]*route="audit-report"[^}]*\} (\S+)$/gm)));
  const waitFor = async (test: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await test())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  };
  const insert = async (count: number, ageMs = 0) => {
    const uuids: string[] = [];
    for (let i = 0; i < count; i++) {
      uuids.push(...sim.control.insertEvents(1, { objectType: OBJECT_TYPE, timestamp: Date.now() - ageMs }).map((e) => e.uuid));
      await sleep(40);
    }
    return uuids;
  };
  const subscribe = (replica: number, resumeAfter?: string) => {
    const subscription = { replica, ...subscribeSse(`${urls[replica]}/graphql`, { filter: { objectType: OBJECT_TYPE }, ...(resumeAfter ? { resumeAfter } : {}) }, {}) };
    subscriptions.push(subscription);
    return subscription;
  };
  const on = (replicas: number[]) => subscriptions.filter((s) => replicas.includes(s.replica) && !s.received.done);
  const allHave = (count: number, of: { received: Received }[]) =>
    Promise.all(of.map((s) => s.received.until((r) => r.uuids.length >= count, 15_000)));
  const expectOneOrder = (of: { received: Received }[], expected: string[]) => {
    for (const { received } of of) {
      expect(received.uuids).toEqual(of[0]!.received.uuids);
      expect(received.errors).toEqual([]);
    }
    expect([...of[0]!.received.uuids].sort()).toEqual([...expected].sort());
  };

  beforeAll(async () => {
    sim = await startSimulator({ eventCount: 20 });
    gateways = [0, 1, 2].map(() =>
      runGateway({
        ...simulatorEnv(sim),
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: PREFIX,
        REDIS_TIMEOUT_MS: '300',
        AUDIT_LIVE_POLL_MS: '100',
        AUDIT_LIVE_LEASE_MS: String(LEASE_MS),
        AUDIT_CACHE_SETTLE_MS: '3000',
        GATEWAY_ALLOW_ANONYMOUS: 'true',
        LOG_LEVEL: 'info',
      }),
    );
    urls = await Promise.all(gateways.map((g) => g.ready));
  }, 90_000);
  afterAll(async () => {
    for (const subscription of subscriptions) void subscription.stop();
    await Promise.all(gateways.map((g) => g.stop('SIGKILL')));
    await sim?.close();
  });

  let holder = -1;
  let expected: string[] = [];

  it('has one replica read the upstream; every subscriber on every replica gets each record once, in one order; a token resumes on another', async () => {
    for (const replica of [0, 1, 2]) for (let i = 0; i < 2; i++) subscribe(replica);
    await waitFor(
      async () => (await Promise.all([0, 1, 2].map((r) => metric(r, /^gateway_live_subscriptions (\S+)$/gm)))).every((n) => n === 2),
      'the subscriptions',
    );
    await sleep(800);
    // The fifth is stamped before the fourth (late), and after the subscriptions started.
    expected = [...(await insert(4)), ...(await insert(1, 500)), ...(await insert(3))];
    await allHave(expected.length, on([0, 1, 2]));
    await sleep(300);
    expectOneOrder(on([0, 1, 2]), expected);
    const reads = await auditReads([0, 1, 2]);
    expect(reads.filter((n) => n > 0)).toHaveLength(1);
    holder = reads.findIndex((n) => n > 0);

    const [from, to] = [0, 1, 2].filter((r) => r !== holder) as [number, number];
    const fourth = on([from])[0]!.received.payloads.filter((p) => p.data)[3]!.data!.auditEventAdded.resumeAfter;
    const resumed = subscribe(to, fourth);
    await allHave(expected.length - 4, [resumed]);
    await sleep(300);
    expect(resumed.received.uuids).toEqual(on([from])[0]!.received.uuids.slice(4));
    // From the stream: the replica it resumed on read nothing upstream.
    expect((await auditReads([to]))[0]).toBe(0);
    void resumed.stop();
  });

  it('writes nothing secret to Redis, and only under its prefix', async () => {
    const raw = new Redis(redis.url);
    try {
      const keys = await raw.keys('*');
      expect(keys.some((k) => k.includes(':stream'))).toBe(true);
      const values: string[] = [];
      for (const key of keys) {
        expect(key.startsWith(PREFIX)).toBe(true);
        const type = await raw.type(key);
        if (type === 'string') values.push((await raw.get(key))!);
        else if (type === 'stream') values.push(JSON.stringify(await raw.xrange(key, '-', '+')));
        else values.push(type);
      }
      const everything = [...keys, ...values].join('\n');
      for (const secret of [DEMO_CLIENT.secret, DEMO_USER.password, 'Bearer', 'access_token']) expect(everything).not.toContain(secret);
    } finally {
      raw.disconnect();
    }
  });

  it('hands the filter to another replica when the one reading is killed (SIGKILL), nothing lost or repeated', async () => {
    expect(holder).toBeGreaterThanOrEqual(0);
    const survivors = [0, 1, 2].filter((r) => r !== holder);
    const before = await auditReads(survivors);
    await gateways[holder]!.stop('SIGKILL');
    const added = await insert(3);
    expected = [...expected, ...added];
    // Within the lease time, give or take a poll, on a loaded machine.
    await allHave(expected.length, on(survivors));
    await sleep(300);
    expectOneOrder(on(survivors), expected);
    const after = await auditReads(survivors);
    expect(after.filter((n, i) => n > before[i]!)).toHaveLength(1);
  });

  it('loses and repeats nothing while Redis is killed and started again mid-stream', async () => {
    const survivors = [0, 1, 2].filter((r) => r !== holder);
    await redis.kill();
    await waitFor(async () => (await Promise.all(survivors.map((r) => metric(r, /^gateway_redis_up (\S+)$/gm)))).every((n) => n === 0), 'Redis down');
    const during = await insert(2);
    expected = [...expected, ...during];
    await allHave(expected.length, on(survivors));
    await redis.start();
    await waitFor(async () => (await Promise.all(survivors.map((r) => metric(r, /^gateway_redis_up (\S+)$/gm)))).every((n) => n === 1), 'Redis up');
    const back = await insert(2);
    expected = [...expected, ...back];
    await allHave(expected.length, on(survivors));
    await sleep(300);
    expectOneOrder(on(survivors), expected);
    // Shared again: between two looks, one replica read the upstream.
    await waitFor(async () => {
      const start = await auditReads(survivors);
      await sleep(400);
      return (await auditReads(survivors)).filter((n, i) => n > start[i]!).length === 1;
    }, 'one poller again');
  });
});
