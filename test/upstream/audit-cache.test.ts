/**
 * The closed-window audit page cache against the simulator over real HTTP: what is kept, what
 * goes upstream every time, the heap bound, single flight, errors, keys and TTL.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/lib/errors.js';
import {
  AuditPageCache,
  type AuditPageCacheOptions,
  type AuditPageOwner,
  type MeasuredAuditPage,
} from '../../src/upstream/identity/audit-cache.js';
import { IdentityClient, type TokenManager } from '../../src/upstream/identity/client.js';
import type { UpstreamHttp } from '../../src/upstream/http.js';
import type { AuditReportQuery, CacheLookupEvent, CallOptions } from '../../src/upstream/types.js';
import { findLeakedSecrets, HOUR, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

/** The cache as createUpstreams wires it (defaults: 64 MiB, settle 60 s). */
let wired: UpstreamHarness;
/** AUDIT_CACHE_MAX_BYTES=0: the bare client, for caches built here with their own options. */
let plain: UpstreamHarness;

beforeAll(async () => {
  [wired, plain] = await Promise.all([
    startUpstreamHarness(),
    startUpstreamHarness({ simulator: { eventCount: 3000 }, env: { AUDIT_CACHE_MAX_BYTES: '0' } }),
  ]);
});
afterAll(async () => {
  for (const harness of [wired, plain]) {
    expect(findLeakedSecrets(harness)).toEqual([]);
    await harness.close();
  }
});
beforeEach(() => {
  wired.sim.control.clearFaults();
  plain.sim.control.clearFaults();
  wired.sim.control.resetCounters();
  plain.sim.control.resetCounters();
});

/** A window that ended `endedAgoMs` ago and holds (about) every seeded event. */
function windowEnded(endedAgoMs: number, pageSize = 50, startIndex = 0): AuditReportQuery {
  const toMillis = Date.now() - endedAgoMs;
  return { fromMillis: toMillis - 73 * HOUR, toMillis, pageSize, startIndex };
}
const closedWindow = (pageSize = 50, startIndex = 0) => windowEnded(5 * 60_000, pageSize, startIndex);

const upstreamCalls = (harness: UpstreamHarness) => harness.sim.control.counters().audit;
const OWNER: AuditPageOwner = { baseUrl: 'https://tenant.example.com', clientId: 'gateway' };

/** `client`'s audit report read through `cache` under `owner`, as an IdentityClient with a cache reads it. */
function cachedApi(client: IdentityClient, cache: AuditPageCache, owner = OWNER) {
  return {
    auditReport: (query: AuditReportQuery, call: CallOptions) =>
      cache.read(owner, query, call, (c) => client.measuredAuditReport(query, c)),
  };
}

function cacheOver(harness: UpstreamHarness, options: Partial<AuditPageCacheOptions> = {}) {
  const cache = new AuditPageCache({ maxBytes: 16 * 1024 * 1024, settleMs: 60_000, ...options });
  return { cache, api: cachedApi(harness.upstreams.identity!, cache) };
}

describe('audit page cache, as createUpstreams wires it', { timeout: 15_000 }, () => {
  it('answers a closed window page asked twice with one upstream call, the same page, a debug line', async () => {
    const { upstreams, call } = wired;
    const query = closedWindow(40);
    const first = await upstreams.identity!.auditReport(query, call);
    const second = await upstreams.identity!.auditReport({ ...query }, call);
    expect(first.rows).toHaveLength(40);
    expect(second).toEqual(first);
    expect(upstreamCalls(wired)).toBe(1);
    expect(upstreams.stats().auditCache).toMatchObject({ entries: 1, hits: 1, misses: 1, maxBytes: 16 * 1024 * 1024 });
    expect(upstreams.stats().auditCache!.bytes).toBeGreaterThan(1000);

    const hitLines = wired.memory.lines().filter((l) => l.msg === 'audit report page served from the cache');
    expect(hitLines).toEqual([expect.objectContaining({ level: 20, requestId: 'req-test', cache: 'audit-report', rows: 40 })]);
    // The upstream call line is written once, by the miss.
    expect(wired.callLines('audit-report').filter((l) => l.level >= 30)).toHaveLength(1);
  });

  it('sends every request of an open window (to = now) upstream', async () => {
    const { upstreams, call } = wired;
    const before = upstreams.stats().auditCache!;
    const query = windowEnded(0, 10);
    await upstreams.identity!.auditReport(query, call);
    await upstreams.identity!.auditReport(query, call);
    expect(upstreamCalls(wired)).toBe(2);
    expect(upstreams.stats().auditCache).toMatchObject({ entries: before.entries, bypasses: before.bypasses + 2 });
  });

  it('sends a window closed less than the settle time ago upstream every time', async () => {
    const { upstreams, call } = wired;
    const query = windowEnded(10_000, 10);
    await upstreams.identity!.auditReport(query, call);
    await upstreams.identity!.auditReport(query, call);
    expect(upstreamCalls(wired)).toBe(2);
  });

  it('never caches with AUDIT_CACHE_MAX_BYTES=0', async () => {
    const { upstreams, call } = plain;
    expect(upstreams.stats().auditCache).toBeUndefined();
    const query = closedWindow(10);
    await upstreams.identity!.auditReport(query, call);
    await upstreams.identity!.auditReport(query, call);
    expect(upstreamCalls(plain)).toBe(2);
  });
});

describe('AuditPageCache', { timeout: 15_000 }, () => {
  it('stays within its bound, evicting the least recently used pages first', async () => {
    const probe = await plain.upstreams.identity!.measuredAuditReport(closedWindow(500), plain.call);
    // Room for two 500-row pages, not three.
    const maxBytes = Math.floor(probe.heapBytes * 2.5);
    const { cache, api } = cacheOver(plain, { maxBytes });
    const pages = [0, 1, 2, 3, 4].map((n) => closedWindow(500, n * 500));
    plain.sim.control.resetCounters();

    for (const query of pages) {
      await api.auditReport(query, plain.call);
      expect(cache.stats().bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(upstreamCalls(plain)).toBe(5);
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 3 });

    await api.auditReport(pages[4]!, plain.call); // kept: newest
    await api.auditReport(pages[3]!, plain.call); // kept
    expect(upstreamCalls(plain)).toBe(5);
    await api.auditReport(pages[0]!, plain.call); // evicted long ago
    expect(upstreamCalls(plain)).toBe(6);
    // Reading page 0 again evicted page 4, the least recently used of the two.
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 4 });
    await api.auditReport(pages[4]!, plain.call);
    expect(upstreamCalls(plain)).toBe(7);
    expect(cache.stats().bytes).toBeLessThanOrEqual(maxBytes);
  });

  it('charges a page the heap it may take, not its body: tiny values weigh more than long strings', async () => {
    const record = { baseType: 'Action', uuid: 'u', timestamp: 1, objectType: 'LOGIN' };
    const tiny = JSON.stringify({ ...record, values: { list: new Array(900).fill(0) } });
    // Two characters fewer: the note's quotes are escaped in the row.
    const note = 'x'.repeat(tiny.length - JSON.stringify({ ...record, values: { note: '' } }).length - 2);
    const long = JSON.stringify({ ...record, values: { note } });
    const page = (text: string) =>
      JSON.stringify({ header: [], data: Array.from({ length: 100 }, () => ['1', null, null, null, text]) });
    expect(page(long).length).toBe(page(tiny).length);
    const bodyBytes = page(tiny).length;

    const charged = async (body: string, maxBytes: number) => {
      const http = { request: async () => ({ value: JSON.parse(body), bodyBytes }) } as unknown as UpstreamHttp;
      const cache = new AuditPageCache({ maxBytes, settleMs: 60_000 });
      const client = new IdentityClient(http, {} as TokenManager, { pages: cache, owner: OWNER });
      const { rows } = await client.auditReport(closedWindow(100), plain.call);
      expect(rows.every((row) => row.ok)).toBe(true);
      return cache.stats();
    };
    // 2.25 a body byte, and 96 a JSON value: 100 records of 907 values (6 + the list and its 900
    // zeros), 100 of 7 (5 + `values` and its note), and one for each row.
    const forBody = Math.ceil(2.25 * bodyBytes);
    expect(await charged(page(tiny), 64 * 1024 * 1024)).toMatchObject({ entries: 1, bytes: forBody + 96 * (100 * 907 + 100) });
    expect(await charged(page(long), 64 * 1024 * 1024)).toMatchObject({ entries: 1, bytes: forBody + 96 * (100 * 7 + 100) });
    // A bound of ten bodies keeps the page of long strings, not the one of tiny values (47 times its body).
    expect(await charged(page(long), 10 * bodyBytes)).toMatchObject({ entries: 1 });
    expect(await charged(page(tiny), 10 * bodyBytes)).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('does not keep a page larger than the whole bound', async () => {
    const { cache, api } = cacheOver(plain, { maxBytes: 10_000 });
    const query = closedWindow(500);
    await api.auditReport(query, plain.call);
    await api.auditReport(query, plain.call);
    expect(upstreamCalls(plain)).toBe(2);
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('makes one upstream call for concurrent misses of one key', async () => {
    const { cache, api } = cacheOver(plain);
    plain.sim.control.setLatency(100, 'audit');
    const query = closedWindow(25);
    const pages = await Promise.all(Array.from({ length: 20 }, () => api.auditReport({ ...query }, plain.call)));
    expect(upstreamCalls(plain)).toBe(1);
    expect(pages.every((page) => page === pages[0])).toBe(true);
    expect(cache.stats()).toMatchObject({ misses: 1, hits: 19, entries: 1 });
    const joined = plain.memory.lines().filter((l) => l.msg === 'audit report page: joined the upstream call in flight');
    expect(joined).toHaveLength(19);
    expect(joined[0]).toMatchObject({ level: 20, requestId: 'req-test', cache: 'audit-report', joined: true });
  });

  it('lets a caller that goes away stop waiting, without failing the others or the shared call', async () => {
    const { api } = cacheOver(plain);
    plain.sim.control.setLatency(150, 'audit');
    const query = closedWindow(5);
    const leaving = new AbortController();
    const first = api.auditReport(query, { ...plain.call, signal: leaving.signal });
    const second = api.auditReport(query, plain.call);
    setTimeout(() => leaving.abort(), 20);

    await expect(first).rejects.toMatchObject({
      name: 'CallerGoneError',
      message: 'The caller went away before the answer was ready.',
      detail: { upstream: 'identity', waitedFor: 'audit-report' },
    });
    expect((await second).rows).toHaveLength(5);
    await api.auditReport(query, plain.call);
    expect(upstreamCalls(plain)).toBe(1);
  });

  it('makes no upstream call for a caller that has already gone away', async () => {
    const { api } = cacheOver(plain);
    const gone = AbortSignal.abort();
    await expect(api.auditReport(closedWindow(5), { ...plain.call, signal: gone })).rejects.toMatchObject({
      name: 'CallerGoneError',
      detail: { upstream: 'identity', waitedFor: 'audit-report' },
    });
    expect(upstreamCalls(plain)).toBe(0);
  });

  it('answers the waiters of a call whose entry was pushed out while it ran, and keeps the newer page', async () => {
    const cache = new AuditPageCache({ maxBytes: 1000, settleMs: 60_000 });
    const page = (uuid: string) =>
      ({ page: { rows: [{ ok: true, record: { uuid } }] }, bodyBytes: 1000, heapBytes: 1000 }) as unknown as MeasuredAuditPage;
    let finishSlow!: (answer: MeasuredAuditPage) => void;
    const slow = cache.read(OWNER, closedWindow(5), plain.call, () => new Promise((resolve) => (finishSlow = resolve)));
    // A page filling the whole bound arrives first and pushes the slow call's entry out.
    await cache.read(OWNER, closedWindow(5, 5), plain.call, async () => page('fast'));
    finishSlow(page('slow'));
    expect((await slow).rows).toEqual([{ ok: true, record: { uuid: 'slow' } }]);
    expect(cache.stats()).toMatchObject({ entries: 1 });
  });

  it('never keeps an upstream error: every waiter gets it, the next call goes upstream and succeeds', async () => {
    const { cache, api } = cacheOver(plain);
    plain.sim.control.failNext(1, 500, { route: 'audit' });
    const query = closedWindow(5);
    const failed = await Promise.allSettled([api.auditReport(query, plain.call), api.auditReport(query, plain.call)]);
    for (const result of failed) {
      expect(result.status).toBe('rejected');
      const error = (result as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    }
    expect(upstreamCalls(plain)).toBe(1);
    expect(cache.stats().entries).toBe(0);

    expect((await api.auditReport(query, plain.call)).rows).toHaveLength(5);
    expect(upstreamCalls(plain)).toBe(2);
    expect(cache.stats().entries).toBe(1);
  });

  it('keeps one entry per filter, window, page and credentials', async () => {
    const { cache } = cacheOver(plain);
    const client = plain.upstreams.identity!;
    const base = closedWindow(10);
    const variants: [AuditPageOwner, AuditReportQuery][] = [
      [OWNER, base],
      [OWNER, { ...base, objectType: 'LOGIN' }],
      [OWNER, { ...base, action: 'Create' }],
      [OWNER, { ...base, pageSize: 11 }],
      [OWNER, { ...base, startIndex: 1 }],
      [OWNER, { ...base, toMillis: base.toMillis - 1 }],
      [OWNER, { ...base, fromMillis: base.fromMillis + 1 }],
      // Same upstream here; what counts is that another client's pages are never shared.
      [{ ...OWNER, clientId: 'another-client' }, base],
      [{ ...OWNER, baseUrl: 'https://other-tenant.example.com' }, base],
    ];
    const readAll = () =>
      Promise.all(variants.map(([owner, query]) => cachedApi(client, cache, owner).auditReport(query, plain.call)));

    const first = await readAll();
    expect(upstreamCalls(plain)).toBe(variants.length);
    expect(cache.stats().entries).toBe(variants.length);
    expect(first[1]!.rows.every((row) => row.ok && row.record.objectType === 'LOGIN')).toBe(true);

    expect(await readAll()).toEqual(first);
    expect(upstreamCalls(plain)).toBe(variants.length);
  });

  it('never keeps a page with unreadable rows', async () => {
    const { api, cache } = cacheOver(plain);
    const query = closedWindow(10, 2000);
    const target = plain.sim.control.events({ fromMillis: query.fromMillis, toMillis: query.toMillis })[2000 + 4]!;
    plain.sim.control.corruptEvent(target.uuid);

    const first = await api.auditReport(query, plain.call);
    const second = await api.auditReport(query, plain.call);
    expect(first.rows[4]).toMatchObject({ ok: false });
    expect(second).toEqual(first);
    expect(upstreamCalls(plain)).toBe(2);
    expect(cache.stats().entries).toBe(0);
  });

  it('keeps a window that closed exactly the settle time ago', async () => {
    const clock = Date.now();
    const lookups: CacheLookupEvent['outcome'][] = [];
    const { api } = cacheOver(plain, { now: () => clock, events: { onCacheLookup: (event) => lookups.push(event.outcome) } });
    const toMillis = clock - 60_000;
    const query = { fromMillis: toMillis - 73 * HOUR, toMillis, pageSize: 5, startIndex: 0 };
    await api.auditReport(query, plain.call);
    await api.auditReport(query, plain.call);
    expect(upstreamCalls(plain)).toBe(1);
    expect(lookups).toEqual(['miss', 'hit']);
  });

  it('forgets a page after its TTL and reports every lookup through onCacheLookup', async () => {
    let clock = Date.now();
    const lookups: CacheLookupEvent['outcome'][] = [];
    const { cache, api } = cacheOver(plain, {
      ttlMs: 1000,
      now: () => clock,
      events: { onCacheLookup: (event) => lookups.push(event.outcome) },
    });
    const query = closedWindow(5);
    await api.auditReport(query, plain.call);
    clock += 999;
    await api.auditReport(query, plain.call);
    expect(upstreamCalls(plain)).toBe(1);
    clock += 2;
    await api.auditReport(query, plain.call);
    expect(upstreamCalls(plain)).toBe(2);
    await api.auditReport({ ...query, toMillis: clock }, plain.call);
    expect(lookups).toEqual(['miss', 'hit', 'miss', 'bypass']);
    // A page that outlived its TTL is not counted as pushed out by the bound.
    expect(cache.stats()).toMatchObject({ entries: 1, evictions: 0 });
  });
});
