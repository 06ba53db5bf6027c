/**
 * The live audit tail shared by replicas through a real Redis: replicas (each its own LiveAudit,
 * shared store and identity client over one set of upstream records) on one filter. One of them
 * reads the upstream; every subscriber on every replica gets each record once, in the same order,
 * late records included; a holder that dies is replaced within the lease, whatever the others' poll
 * interval; a token resumes on another replica from the stream; with Redis gone each
 * replica polls alone, and they share one poller again once it is back.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LiveAudit, type LiveItem } from '../../src/audit/live/index.js';
import { createLogger } from '../../src/lib/logger.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';
import { FilterLease } from '../../src/upstream/shared-store/filter-lease.js';
import { SharedStore } from '../../src/upstream/shared-store/store.js';
import { auditRecord, fakeIdentity, type FakeIdentity } from '../live/fake-identity.js';
import { redisServerForSuite, skipWithoutRedis } from './redis-server.js';

const skip = skipWithoutRedis('live tail across replicas');
const LEASE_MS = 1000;
const SETTLE_MS = 2000;
const FILTER = { objectType: 'LOGIN' };
/** A record as the identity client hands it on (the fake's lack the fields a real one has). */
const upstreamRecord = (id: string, timestamp: number) => ({ ...auditRecord(id, timestamp), baseType: 'Audit', values: {} }) as AuditRecord;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Replica {
  readonly store: SharedStore;
  readonly identity: FakeIdentity;
  readonly live: LiveAudit;
}

/** What one subscription received. */
class Stream {
  readonly uuids: string[] = [];
  token: string | undefined;
  errors: unknown[] = [];

  constructor(readonly iterator: AsyncIterableIterator<LiveItem>) {
    void (async () => {
      for await (const item of iterator) {
        if (item.error) this.errors.push(item.error);
        else {
          this.uuids.push(item.record.uuid);
          this.token = item.resumeAfter();
        }
      }
    })();
  }

  stop() {
    void this.iterator.return?.();
  }
}

describe.skipIf(skip)('live tail across replicas', { timeout: 30_000 }, () => {
  const redis = redisServerForSuite();
  const log = createLogger({ level: 'silent' });
  let records: AuditRecord[];
  let replicas: Replica[] = [];
  let streams: Stream[] = [];
  let raw: Redis;
  let prefixes = 0;
  let ids = 0;

  /** `count` replicas under a prefix of the test's own, once their stores are up; `pollMs` for all or each. */
  async function startReplicas(count: number, pollMs: number | number[] = 20, waitForRedis = true): Promise<Replica[]> {
    const keyPrefix = `tail-${++prefixes}:`;
    replicas = Array.from({ length: count }, (_, i) => {
      const store = new SharedStore({ url: redis.url, keyPrefix, timeoutMs: 300, liveLeaseMs: LEASE_MS }, log);
      const identity = fakeIdentity(records);
      const live = new LiveAudit({
        identity,
        log,
        pollMs: typeof pollMs === 'number' ? pollMs : pollMs[i]!,
        settleMs: SETTLE_MS,
        giveUpMs: 60_000,
        maxSubscriptions: 100,
        maxFilters: 10,
        shared: { store, leaseMs: LEASE_MS },
      });
      return { store, identity, live };
    });
    if (waitForRedis) await vi.waitFor(() => expect(replicas.every((r) => r.store.isUp())).toBe(true), { timeout: 5000, interval: 20 });
    return replicas;
  }

  const subscribe = (replica: Replica, resumeAfter?: string) => {
    const stream = new Stream(replica.live.subscribe({ filter: FILTER, ...(resumeAfter ? { resumeAfter } : {}) }));
    streams.push(stream);
    return stream;
  };
  /** Upstream reads each replica made for the filter. */
  const reads = () => replicas.map((r) => r.identity.queries.filter((q) => q.objectType === FILTER.objectType).length);
  /** Adds records one by one, each stamped now (or `ageMs` earlier). */
  async function insert(count: number, ageMs = 0): Promise<string[]> {
    const added: string[] = [];
    for (let i = 0; i < count; i++) {
      const record = upstreamRecord(`r${++ids}`, Date.now() - ageMs);
      records.push(record);
      added.push(record.uuid);
      await sleep(15);
    }
    return added;
  }
  const allHave = (expected: string[], of = streams) =>
    vi.waitFor(() => of.forEach((s) => expect(s.uuids.length).toBeGreaterThanOrEqual(expected.length)), { timeout: 10_000, interval: 20 });

  /** Two replicas, two subscribers each; one of the holder's leaves after `count` records, its token for the other replica. */
  async function leaveTheHolder(count: number) {
    records = [];
    await startReplicas(2);
    const [a0, b0, a1, b1] = [subscribe(replicas[0]!), subscribe(replicas[0]!), subscribe(replicas[1]!), subscribe(replicas[1]!)];
    await sleep(100);
    const before = await insert(count);
    await allHave(before);
    const holder = reads().findIndex((n) => n > 0);
    const [leaving, stays] = holder === 0 ? [a0!, b0!] : [a1!, b1!];
    const token = leaving.token!;
    leaving.stop();
    return { before, stays, token, other: replicas[1 - holder]!, otherReads: () => reads()[1 - holder] };
  }

  beforeAll(() => {
    raw = new Redis(redis.url, { lazyConnect: true });
    raw.on('error', () => undefined);
  });
  afterEach(async () => {
    for (const stream of streams) stream.stop();
    for (const replica of replicas) replica.live.close();
    await Promise.all(replicas.map((r) => r.store.close()));
    streams = [];
    replicas = [];
  });
  afterAll(() => raw?.disconnect());

  it('has one replica read the upstream; every subscriber on every replica gets each record once, in one order, late ones included', async () => {
    records = [];
    await startReplicas(3);
    for (const replica of replicas) for (let i = 0; i < 2; i++) subscribe(replica);
    await sleep(100);
    const early = await insert(6);
    await sleep(300);
    // Stamped after the subscriptions started, and before records already delivered.
    const late = await insert(2, 350);
    const expected = [...early, ...late, ...(await insert(3))];
    await allHave(expected);
    await sleep(100);
    for (const stream of streams) {
      expect(stream.uuids).toEqual(streams[0]!.uuids);
      expect(stream.errors).toEqual([]);
    }
    expect([...streams[0]!.uuids].sort()).toEqual([...expected].sort());
    expect(reads().filter((n) => n > 0)).toHaveLength(1);
  });

  it('resumes a token of one replica on another from the stream, without reading the upstream there', async () => {
    const { before, stays, token, other, otherReads } = await leaveTheHolder(4);
    const after = await insert(3);
    await allHave([...before, ...after], [stays]);
    const resumed = subscribe(other, token);
    await allHave(after, [resumed]);
    await sleep(100);
    expect(resumed.uuids).toEqual(stays.uuids.slice(before.length));
    expect(otherReads()).toBe(0);
  });

  it('resumes from the upstream when the stream no longer holds the token\'s position', async () => {
    const { before, stays, token, other, otherReads } = await leaveTheHolder(3);
    // As after a restart of Redis, or a trim: the entries the token points into are gone.
    const lease = new FilterLease(replicas[0]!.store, JSON.stringify([FILTER.objectType, null]), LEASE_MS);
    await raw.connect();
    try {
      await raw.del(lease.streamKey);
    } finally {
      raw.disconnect();
    }
    const after = await insert(2);
    await allHave([...before, ...after], [stays]);
    const resumed = subscribe(other, token);
    await allHave(after, [resumed]);
    await sleep(100);
    expect(resumed.uuids).toEqual(after);
    expect(otherReads()).toBeGreaterThan(0);
  });

  it('resumes from the upstream when reading the stream fails in an unforeseen way', async () => {
    const { before, stays, token, other, otherReads } = await leaveTheHolder(3);
    const after = await insert(2);
    await allHave([...before, ...after], [stays]);
    vi.spyOn(other.store, 'streamAfter').mockRejectedValue(new TypeError('unforeseen'));
    const resumed = subscribe(other, token);
    await allHave(after, [resumed]);
    await sleep(100);
    expect(resumed.uuids).toEqual(after);
    expect(resumed.errors).toEqual([]);
    expect(otherReads()).toBeGreaterThan(0);
  });

  it('hands the filter to a replica that still has subscribers when the holder has none left', async () => {
    records = [];
    await startReplicas(2);
    const streamsOf = [subscribe(replicas[0]!), subscribe(replicas[1]!)];
    await sleep(100);
    const first = await insert(2);
    await allHave(first);
    expect(reads().filter((n) => n > 0)).toHaveLength(1);
    const holder = reads().findIndex((n) => n > 0);
    streamsOf[holder]!.stop();
    const other = streamsOf[1 - holder]!;
    const readsOfOther = reads()[1 - holder]!;
    const next = await insert(3);
    await allHave([...first, ...next], [other]);
    expect(other.uuids).toEqual([...first, ...next]);
    expect(reads()[1 - holder]).toBeGreaterThan(readsOfOther);
  });

  it('hands the filter of a holder that dies to a follower within the lease, without waiting for its next poll', async () => {
    records = [];
    // The follower polls once a minute: only its lease timer can make it take over in time.
    const [holder, follower] = await startReplicas(2, [20, 60_000]);
    const ofHolder = subscribe(holder!);
    await vi.waitFor(() => expect(reads()[0]).toBeGreaterThan(0), { timeout: 5000, interval: 20 });
    const ofFollower = subscribe(follower!);
    await sleep(100);
    const before = await insert(3);
    await allHave(before);
    expect(reads()[1]).toBe(0);
    // Dies: no more renewals, and its lease is left in Redis to lapse.
    await holder!.store.close();
    holder!.live.close();
    const after = await insert(3);
    await vi.waitFor(() => expect(ofFollower.uuids.length).toBeGreaterThanOrEqual(before.length + after.length), {
      timeout: 4 * LEASE_MS,
      interval: 20,
    });
    await sleep(100);
    expect(ofFollower.uuids).toEqual([...before, ...after]);
    expect(ofFollower.errors).toEqual([]);
    expect(ofHolder.uuids.slice(0, before.length)).toEqual(before);
    expect(reads()[1]).toBeGreaterThan(0);
  });

  it('keeps the lease between polls further apart than the lease lasts', async () => {
    records = [];
    await startReplicas(2, LEASE_MS + 200);
    for (const replica of replicas) subscribe(replica);
    await vi.waitFor(() => expect(Math.max(...reads())).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 50 });
    expect(reads().filter((n) => n > 0)).toHaveLength(1);
  });

  it('polls on each replica while Redis is down, nothing lost or repeated, and shares one poller again once it is back', async () => {
    records = [];
    await startReplicas(2);
    for (const replica of replicas) subscribe(replica);
    await sleep(100);
    const before = await insert(3);
    await allHave(before);
    await redis.kill();
    await vi.waitFor(() => expect(replicas.every((r) => !r.store.isUp())).toBe(true), { timeout: 5000, interval: 20 });
    const during = await insert(3);
    await allHave([...before, ...during]);
    const readsDuring = reads();
    await sleep(100);
    expect(reads().every((n, i) => n > readsDuring[i]!)).toBe(true);
    await redis.start();
    await vi.waitFor(() => expect(replicas.every((r) => r.store.isUp())).toBe(true), { timeout: 10_000, interval: 20 });
    const back = await insert(3);
    const expected = [...before, ...during, ...back];
    await allHave(expected);
    // One replica reads again: between two looks, only one replica's reads grew.
    await vi.waitFor(
      async () => {
        const start = reads();
        await sleep(150);
        expect(reads().filter((n, i) => n > start[i]!)).toHaveLength(1);
      },
      { timeout: 10_000, interval: 50 },
    );
    const last = await insert(2);
    await allHave([...expected, ...last]);
    await sleep(100);
    for (const stream of streams) {
      expect(stream.uuids).toEqual([...expected, ...last]);
      expect(stream.errors).toEqual([]);
    }
  });

  it('polls on each replica when Redis is down from the start, and shares one poller once it comes', async () => {
    records = [];
    let alone: string[] = [];
    await redis.kill();
    try {
      await startReplicas(2, 20, false);
      for (const replica of replicas) subscribe(replica);
      await sleep(100);
      alone = await insert(3);
      await allHave(alone);
      expect(reads().every((n) => n > 0)).toBe(true);
    } finally {
      await redis.start();
    }
    await vi.waitFor(() => expect(replicas.every((r) => r.store.isUp())).toBe(true), { timeout: 10_000, interval: 20 });
    await vi.waitFor(
      async () => {
        const start = reads();
        await sleep(150);
        expect(reads().filter((n, i) => n > start[i]!)).toHaveLength(1);
      },
      { timeout: 10_000, interval: 50 },
    );
    const shared = await insert(3);
    await allHave([...alone, ...shared]);
    await sleep(100);
    for (const stream of streams) expect(stream.uuids).toEqual([...alone, ...shared]);
  });

  it('skips what the gateway did not write under its prefix, and replaces another program\'s value at the lease or stream key', async () => {
    records = [];
    const [replica] = await startReplicas(1);
    const lease = new FilterLease(replica!.store, JSON.stringify([FILTER.objectType, null]), LEASE_MS);
    await raw.connect();
    try {
      await raw.set(lease.leaseKey, 'not a lease');
      await raw.set(lease.streamKey, 'not a stream');
      const stream = subscribe(replica!);
      await sleep(100);
      const first = await insert(2);
      await allHave(first);
      await raw.xadd(lease.streamKey, '*', 'r', JSON.stringify(upstreamRecord('forged', Date.now())));
      await raw.xadd(lease.streamKey, '*', 'x', 'y', 'z', 'w');
      const next = await insert(2);
      await allHave([...first, ...next]);
      await sleep(100);
      expect(stream.uuids).toEqual([...first, ...next]);
      expect(stream.errors).toEqual([]);
      expect(await raw.type(lease.streamKey)).toBe('stream');
    } finally {
      raw.disconnect();
    }
  });
});
