/**
 * Closed audit pages shared by replicas through Redis: a page is read from the upstream once for
 * three gateways, whoever asks first; a page with unreadable rows is never shared; a value under
 * the prefix the gateway did not write is a miss; Redis killed and back; no secret in Redis.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import type { AuditReportQuery, AuditRowResult } from '../../src/upstream/types.js';
import {
  scriptedAuditPage,
  scriptedAuditRow,
  scriptedEnv,
  startScriptedUpstream,
  type ScriptedUpstream,
} from '../helpers/scripted-upstream.js';
import { redisServerForSuite, skipWithoutRedis } from './redis-server.js';
import { startReplica, type Replica } from './replicas.js';

const skip = skipWithoutRedis('audit pages across replicas');

const CLIENT_SECRET = 'audit-pages-client-secret';
const REDIS_PASSWORD = 'audit-pages-redis-password';
const HOUR = 3_600_000;
const call = { log: createLogger({ level: 'silent' }) };
const page = (rows: number, from = 0) => scriptedAuditPage(Array.from({ length: rows }, (_, i) => scriptedAuditRow(from + i)));
/** A window closed long ago; each test its own, so that none finds another's page. */
let windows = 0;
const closedWindow = (pageSize = 10): AuditReportQuery => {
  const toMillis = Date.now() - 10 * 60_000 - ++windows * 1000;
  return { fromMillis: toMillis - HOUR, toMillis, pageSize, startIndex: 0 };
};
const ids = (rows: readonly AuditRowResult[]) => rows.map((row) => (row.ok ? row.record.uuid : 'unreadable'));

describe.skipIf(skip)('closed audit pages shared by replicas', { timeout: 20_000 }, () => {
  const redis = redisServerForSuite({ user: { name: 'gateway', password: REDIS_PASSWORD } });
  let upstream: ScriptedUpstream;
  let replicas: Replica[];
  let raw: Redis;
  const auditCalls = () => upstream.requests('audit').length;
  const pageKeys = async () => (await raw.keys('pages-test:audit-page:*')).filter((key) => !key.endsWith(':fill'));

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    const env = { ...scriptedEnv(upstream), IDENTITY_CLIENT_ID: 'gateway', IDENTITY_CLIENT_SECRET: CLIENT_SECRET, REDIS_KEY_PREFIX: 'pages-test:' };
    replicas = [0, 1, 2].map(() => startReplica(redis.url, env));
    raw = new Redis(redis.url);
    raw.on('error', () => undefined);
    await vi.waitFor(() => expect(replicas.every((r) => r.store.isUp())).toBe(true), { timeout: 5000, interval: 20 });
  });
  afterEach(() => upstream.clear());
  afterAll(async () => {
    raw?.disconnect();
    await Promise.all((replicas ?? []).map((r) => r.close()));
    await upstream?.close();
  });

  it('reads a closed page from the upstream once for three replicas asking at once, each getting it whole', async () => {
    let release!: () => void;
    const until = new Promise<void>((resolve) => (release = resolve));
    const body = page(10);
    upstream.answerNext('audit', { body, pause: { afterBytes: 10, until } });
    const query = closedWindow();
    const pages = Promise.all(replicas.map((r) => r.upstreams.identity!.auditReport({ ...query }, call)));
    await vi.waitFor(() => expect(auditCalls()).toBe(1), { timeout: 5000, interval: 10 });
    // The others find the fill lock taken and wait on it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    const answers = await pages;
    expect(auditCalls()).toBe(1);
    const expected = Array.from({ length: 10 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const answer of answers) expect(ids(answer.rows)).toEqual(expected);
    expect(answers[1]!.rows).toEqual(answers[0]!.rows);
    expect(await pageKeys()).toHaveLength(1);

    // A replica asking later, its own memory empty of it, reads it from Redis.
    const late = startReplica(redis.url, { ...scriptedEnv(upstream), IDENTITY_CLIENT_ID: 'gateway', IDENTITY_CLIENT_SECRET: CLIENT_SECRET, REDIS_KEY_PREFIX: 'pages-test:' });
    await vi.waitFor(() => expect(late.store.isUp()).toBe(true), { timeout: 5000, interval: 20 });
    expect(ids((await late.upstreams.identity!.auditReport({ ...query }, call)).rows)).toEqual(expected);
    expect(auditCalls()).toBe(1);
    expect(late.upstreams.stats().auditCache).toMatchObject({ misses: 1, entries: 1 });
    await late.close();
  });

  it('shares no page between gateways of different service clients on the same Redis', async () => {
    upstream.answerNext('audit', { body: page(10) });
    const query = closedWindow();
    await replicas[0]!.upstreams.identity!.auditReport({ ...query }, call);
    expect(auditCalls()).toBe(1);
    const other = startReplica(redis.url, { ...scriptedEnv(upstream), IDENTITY_CLIENT_ID: 'other-client', IDENTITY_CLIENT_SECRET: CLIENT_SECRET, REDIS_KEY_PREFIX: 'pages-test:' });
    try {
      await vi.waitFor(() => expect(other.store.isUp()).toBe(true), { timeout: 5000, interval: 20 });
      upstream.answerNext('audit', { body: page(10) });
      await other.upstreams.identity!.auditReport({ ...query }, call);
      expect(auditCalls()).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('never shares a page with an unreadable row: each replica reads it, nothing is stored', async () => {
    const broken = page(5);
    (broken.data as unknown[][])[2] = ['x', 'y', 'z', null, '{not json'];
    upstream.answerNext('audit', { body: broken }, { body: broken }, { body: broken });
    const query = closedWindow();
    const before = await pageKeys();
    for (const replica of replicas) {
      const answer = await replica.upstreams.identity!.auditReport({ ...query }, call);
      expect(ids(answer.rows)[2]).toBe('unreadable');
    }
    expect(auditCalls()).toBe(3);
    expect(await pageKeys()).toEqual(before);
  });

  it('reads a value under the prefix that the gateway did not write as a miss', async () => {
    const [a, b, c] = replicas;
    const query = closedWindow();
    const before = new Set(await pageKeys());
    upstream.answerNext('audit', { body: page(10) });
    await a!.upstreams.identity!.auditReport({ ...query }, call);
    const [key, ...others] = (await pageKeys()).filter((k) => !before.has(k));
    expect(key).toBeDefined();
    expect(others).toEqual([]);
    await raw.set(key!, 'not a value the gateway wrote');
    upstream.answerNext('audit', { body: page(10) });
    expect(ids((await b!.upstreams.identity!.auditReport({ ...query }, call)).rows)).toHaveLength(10);
    expect(auditCalls()).toBe(2);
    // Sealed as the gateway seals values, but rows that do not read as audit records.
    await c!.store.set(key!, 'audit-page', JSON.stringify([['{"uuid":"x"}'], [42]]), 60_000);
    upstream.answerNext('audit', { body: page(10) });
    const answer = await c!.upstreams.identity!.auditReport({ ...query }, call);
    expect(ids(answer.rows)).toHaveLength(10);
    expect(ids(answer.rows)).not.toContain('unreadable');
    expect(auditCalls()).toBe(3);
  });

  it('keeps answering from the upstream with Redis killed, one warn line and gauge 0 each, and shares again once it is back', async () => {
    await redis.kill();
    await vi.waitFor(async () => expect(await Promise.all(replicas.map((r) => r.redisUp()))).toEqual([0, 0, 0]), { timeout: 5000, interval: 20 });
    const query = closedWindow();
    for (const replica of replicas) {
      upstream.answerNext('audit', { body: page(10) });
      expect(ids((await replica.upstreams.identity!.auditReport({ ...query }, call)).rows)).toHaveLength(10);
    }
    expect(auditCalls()).toBe(3);
    for (const replica of replicas) {
      expect(replica.logs().filter((line) => line.level === 40 && /Redis is unreachable/.test(line.msg))).toHaveLength(1);
    }

    await redis.start();
    await vi.waitFor(() => expect(replicas.every((r) => r.store.isUp())).toBe(true), { timeout: 5000, interval: 20 });
    expect(await Promise.all(replicas.map((r) => r.redisUp()))).toEqual([1, 1, 1]);
    const next = closedWindow();
    upstream.answerNext('audit', { body: page(10) });
    for (const replica of replicas) expect(ids((await replica.upstreams.identity!.auditReport({ ...next }, call)).rows)).toHaveLength(10);
    expect(auditCalls()).toBe(4);
  });

  it('writes no credential into Redis: no client secret, token, or password in any key or value', async () => {
    upstream.answerNext('audit', { body: page(10) });
    await replicas[0]!.upstreams.identity!.auditReport(closedWindow(), call);
    const keys = await raw.keys('*');
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((key) => !key.startsWith('pages-test:'))).toEqual([]);
    const stored = [...keys, ...(await Promise.all(keys.map((key) => raw.get(key).catch(() => ''))))].join('\n');
    for (const secret of [CLIENT_SECRET, REDIS_PASSWORD, 'good-access-token', 'good-refresh-token', 'Bearer']) {
      expect(stored).not.toContain(secret);
    }
  });
});
