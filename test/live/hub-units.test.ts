/**
 * The live audit hub driven directly over an in-memory identity service: argument and token
 * checks, the subscription, per-caller and filter limits, slots given back, catch-up reads and
 * shutdown. Polls run every few milliseconds; the tests wait for what a client would see.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/lib/errors.js';
import { CATCH_UP_TURNS, LiveAudit, type LiveAuditOptions } from '../../src/audit/live/hub.js';
import { digestOf, filterKey } from '../../src/audit/live/records.js';
import { encodeResumeToken, TOKEN_VALIDITY_MS, type ResumePoint } from '../../src/audit/live/resume-token.js';
import type { LiveItem } from '../../src/audit/live/subscriber.js';
import { LiveSubscriber } from '../../src/audit/live/subscriber.js';
import { abortCauseOf } from '../../src/upstream/deadline.js';
import { errorForAbort } from '../../src/upstream/error-mapping.js';
import { auditRecord, fakeIdentity, memoryLogger, type FakeIdentity } from './fake-identity.js';

const SETTLE_MS = 5000;
const hubs: LiveAudit[] = [];

function hub(identity: FakeIdentity | undefined, options: Partial<LiveAuditOptions> = {}) {
  const { log, memory } = memoryLogger();
  const created = new LiveAudit({
    identity,
    log,
    pollMs: 5,
    settleMs: SETTLE_MS,
    giveUpMs: 60_000,
    maxSubscriptions: 10,
    maxFilters: 5,
    ...options,
  });
  hubs.push(created);
  return { live: created, memory };
}

afterEach(() => {
  for (const live of hubs.splice(0)) live.close();
});

async function until(test: () => boolean, what = 'condition') {
  const deadline = Date.now() + 5000;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`${what} not reached`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** What a client reads next: a uuid, an error code, or the end. */
async function read(stream: AsyncIterableIterator<LiveItem>): Promise<string> {
  const next = await stream.next();
  if (next.done) return 'done';
  return next.value.error ? `error ${next.value.error.code}` : next.value.record.uuid;
}

function thrown(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('nothing thrown');
}

const token = (point: Partial<ResumePoint> & { issuedAt: number }) =>
  encodeResumeToken({ filterKey: filterKey({}), newest: point.issuedAt, floor: point.issuedAt - SETTLE_MS, delivered: [], ...point });

describe('arguments', () => {
  it('a gateway without an identity service refuses with UPSTREAM_NOT_CONFIGURED', () => {
    expect(thrown(() => hub(undefined).live.subscribe({}))).toMatchObject({
      code: 'UPSTREAM_NOT_CONFIGURED',
      service: 'identity',
      message: 'The identity service is not configured.',
    });
  });

  it('objectType of 1 to 256 characters and the upstream actions only', () => {
    const { live } = hub(fakeIdentity(), { maxFilters: 10 });
    expect(thrown(() => live.subscribe({ filter: { objectType: '' } }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'filter.objectType must be 1 to 256 characters.',
    });
    expect(thrown(() => live.subscribe({ filter: { objectType: 'x'.repeat(257) } }))).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(thrown(() => live.subscribe({ filter: { action: 'CREATE' } }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'filter.action must be one of Create, Update, Delete, Link, Unlink.',
    });
    live.subscribe({ filter: { objectType: 'x'.repeat(256), action: 'Unlink' } });
    live.subscribe({ filter: { objectType: 'x', action: null } });
    live.subscribe({ filter: null });
    expect(live.stats().subscriptions).toBe(3);
    expect(live.stats().pollers.map((p) => p.filter)).toEqual([
      { objectType: 'x'.repeat(256), action: 'Unlink' },
      { objectType: 'x', action: undefined },
      { objectType: undefined, action: undefined },
    ]);
  });

  it('since reaches 15 minutes back (a second of slack), and not together with resumeAfter', () => {
    const now = Date.UTC(2026, 10, 23, 12);
    const { live } = hub(fakeIdentity(), { now: () => now });
    expect(thrown(() => live.subscribe({ since: new Date(now - TOKEN_VALIDITY_MS - 1001) }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: '`since` may be at most 15 minutes back.',
    });
    live.subscribe({ since: new Date(now - TOKEN_VALIDITY_MS - 1000) });
    expect(thrown(() => live.subscribe({ since: new Date(now), resumeAfter: token({ issuedAt: now }) }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'Give either `since` or `resumeAfter`, not both.',
    });
    live.subscribe({ since: null, resumeAfter: token({ issuedAt: now }) });
    expect(live.stats().subscriptions).toBe(2);
  });

  it('a token belongs to its filter, is checked as the arguments are, and reaches back no further than since could', () => {
    const now = Date.UTC(2026, 10, 23, 12);
    const { live } = hub(fakeIdentity(), { now: () => now });
    const login = filterKey({ objectType: 'LOGIN', action: undefined });
    expect(thrown(() => live.subscribe({ filter: { objectType: 'GROUP' }, resumeAfter: token({ issuedAt: now, filterKey: login }) }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'resumeAfter was issued for another filter; give the same filter or none.',
    });
    expect(thrown(() => live.subscribe({ resumeAfter: token({ issuedAt: now, filterKey: JSON.stringify(['', null]) }) }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'resumeAfter is not a token this gateway issued.',
    });
    expect(thrown(() => live.subscribe({ resumeAfter: token({ issuedAt: now, filterKey: JSON.stringify([null, 'Upsert']) }) }))).toMatchObject({
      message: 'resumeAfter is not a token this gateway issued.',
    });
    const reach = TOKEN_VALIDITY_MS + 1000 + SETTLE_MS;
    expect(thrown(() => live.subscribe({ resumeAfter: token({ issuedAt: now, floor: now - reach - 1 }) }))).toMatchObject({
      message: 'resumeAfter is not a token this gateway issued.',
    });
    live.subscribe({ resumeAfter: token({ issuedAt: now, floor: now - reach }) });
    // The same filter given again, or none: the token's filter is polled.
    live.subscribe({ filter: { objectType: 'LOGIN' }, resumeAfter: token({ issuedAt: now, filterKey: login }) });
    live.subscribe({ filter: null, resumeAfter: token({ issuedAt: now, filterKey: login }) });
    live.subscribe({ resumeAfter: token({ issuedAt: now, filterKey: login }) });
    expect(live.stats().pollers).toEqual([
      { filter: { objectType: undefined, action: undefined }, subscribers: 1, polls: expect.any(Number) },
      { filter: { objectType: 'LOGIN', action: undefined }, subscribers: 3, polls: expect.any(Number) },
    ]);
  });
});

describe('limits', () => {
  it('at most maxSubscriptions open at once; a closed one gives its slot back', async () => {
    const { live } = hub(fakeIdentity(), { maxSubscriptions: 2 });
    const first = live.subscribe({});
    live.subscribe({});
    const refused = thrown(() => live.subscribe({}));
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', detail: { limit: 2 } });
    expect(refused.message).toBe('This gateway serves at most 2 live subscriptions at once; try again later.');
    expect(refused.name).toBe('RateLimitedError');
    await first.return!();
    live.subscribe({});
    expect(live.stats()).toMatchObject({ subscriptions: 2, started: 3 });
  });

  it('at most maxSubscriptionsPerCaller for one caller, anonymous callers counted together', async () => {
    const { live } = hub(fakeIdentity(), { maxSubscriptionsPerCaller: 2 });
    const a1 = live.subscribe({ callerId: 'a' });
    const a2 = live.subscribe({ callerId: 'a' });
    const refused = thrown(() => live.subscribe({ callerId: 'a' }));
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', detail: { limit: 2 } });
    expect(refused.message).toBe('A caller may hold at most 2 live subscriptions at once; end one, or try again later.');
    expect(refused.name).toBe('CallerRateLimitedError');
    live.subscribe({ callerId: 'b' });
    live.subscribe({});
    live.subscribe({});
    expect(thrown(() => live.subscribe({}))).toMatchObject({ code: 'RATE_LIMITED' });
    // Each one ended gives the caller a slot back, the last one too.
    await a1.return!();
    const a3 = live.subscribe({ callerId: 'a' });
    await a2.return!();
    await a3.return!();
    const a4 = live.subscribe({ callerId: 'a' });
    live.subscribe({ callerId: 'a' });
    expect(thrown(() => live.subscribe({ callerId: 'a' }))).toMatchObject({ code: 'RATE_LIMITED' });
    // One of two ended: the caller holds one, so one more fits, and no more.
    await a4.return!();
    live.subscribe({ callerId: 'a' });
    expect(thrown(() => live.subscribe({ callerId: 'a' }))).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('at most maxFilters polled at once; a filter already polled is always served', async () => {
    const { live } = hub(fakeIdentity(), { maxFilters: 2 });
    const login = live.subscribe({ filter: { objectType: 'LOGIN' } });
    live.subscribe({ filter: { objectType: 'GROUP' } });
    const refused = thrown(() => live.subscribe({ filter: { objectType: 'USER' } }));
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', detail: { limit: 2 } });
    expect(refused.message).toBe(
      'This gateway polls at most 2 distinct filters at once; subscribe with a filter already in use, or try again later.',
    );
    live.subscribe({ filter: { objectType: 'LOGIN' } });
    await login.return!();
    expect(thrown(() => live.subscribe({ filter: { objectType: 'USER' } }))).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('a client that falls 1,000 records behind is cut off by default', async () => {
    const identity = fakeIdentity();
    const { live } = hub(identity);
    const stream = live.subscribe({});
    const now = Date.now();
    await until(() => live.stats().pollers[0]!.polls > 0, 'a first poll');
    identity.records.push(...Array.from({ length: 1001 }, (_, i) => auditRecord(i, now + 1)));
    // The first batch reaches the client however large; the next finds it 1,001 behind.
    await until(() => identity.queries.length > 3, 'polls');
    identity.records.push(auditRecord('next', now + 2));
    await until(() => live.stats().subscriptions === 0, 'the cut-off');
    expect(await read(stream)).toBe('error RATE_LIMITED');
  });
});

describe('pollers and slots', () => {
  it('one poller per filter, started with the first subscriber and stopped with the last', async () => {
    const identity = fakeIdentity();
    const { live, memory } = hub(identity, { pageSize: 3 });
    const a = live.subscribe({ filter: { objectType: 'LOGIN' } });
    const b = live.subscribe({ filter: { objectType: 'LOGIN' } });
    await until(() => identity.queries.length > 0, 'a poll');
    expect(identity.queries[0]).toMatchObject({ objectType: 'LOGIN', pageSize: 3 });
    identity.records.push(auditRecord(1, Date.now()));
    expect(await read(a)).toBe('uuid-1');
    expect(await read(b)).toBe('uuid-1');
    expect(live.stats().pollers).toEqual([{ filter: { objectType: 'LOGIN', action: undefined }, subscribers: 2, polls: expect.any(Number) }]);
    await a.return!();
    expect(live.stats().pollers[0]!.subscribers).toBe(1);
    await b.return!();
    expect(live.stats()).toMatchObject({ subscriptions: 0, pollers: [] });
    const calls = identity.queries.length;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(identity.queries.length).toBe(calls);
    // A poller stopped is replaced by a new one for the next subscriber.
    const c = live.subscribe({ filter: { objectType: 'LOGIN' } });
    await until(() => identity.queries.length > calls, 'a new poll');
    await c.return!();
    expect(memory.lines().every((line) => line.component === 'live-audit')).toBe(true);
  });

  it('a poller that gives up frees every slot and ends its streams with the error', async () => {
    const identity = fakeIdentity();
    identity.failWith = new Error('reset');
    const { live, memory } = hub(identity, { giveUpMs: 0 });
    const a = live.subscribe({ callerId: 'a' });
    const b = live.subscribe({ callerId: 'a' });
    expect(await read(a)).toBe('error UPSTREAM_UNAVAILABLE');
    expect(await read(b)).toBe('error UPSTREAM_UNAVAILABLE');
    expect(live.stats()).toMatchObject({ subscriptions: 0, pollers: [] });
    // Handled as designed: one warn line, no error.
    expect(memory.lines().filter((line) => line.level === 50)).toEqual([]);
    const gaveUp = memory.lines().filter((line) => line.msg === 'live audit poller gave up: upstream failing');
    expect(gaveUp).toEqual([expect.objectContaining({ level: 40, component: 'live-audit', code: 'UPSTREAM_UNAVAILABLE' })]);
    // A new poller for the same filter serves the next subscriber.
    identity.failWith = undefined;
    const c = live.subscribe({ callerId: 'a' });
    identity.records.push(auditRecord(1, Date.now()));
    expect(await read(c)).toBe('uuid-1');
    expect(live.stats().pollers).toHaveLength(1);
  });

  it('a subscription without since or resumeAfter makes no catch-up read', async () => {
    const identity = fakeIdentity();
    const { live } = hub(identity, { pollMs: 60_000 });
    live.subscribe({});
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(identity.queries).toEqual([]);
  });

  it('a new subscriber starts after what was recorded before it subscribed', async () => {
    const identity = fakeIdentity([auditRecord('before', Date.now() - 1)]);
    const { live } = hub(identity);
    const stream = live.subscribe({});
    await until(() => identity.queries.length > 0, 'a poll');
    identity.records.push(auditRecord('after', Date.now()));
    expect(await read(stream)).toBe('uuid-after');
  });
});

describe('catch-up reads', () => {
  it("bounds each read by a query's deadline, and retries one that timed out", async () => {
    const base = fakeIdentity([auditRecord(1, Date.now() - 100)]);
    const cut: AbortSignal[] = [];
    let hang = true;
    const identity = {
      ...base,
      auditReport(...args: Parameters<FakeIdentity['auditReport']>) {
        const [, call] = args;
        // The poller's reads have no deadline; a catch-up read answers only when its own ends, as a stalled upstream.
        if (call.expiresAt === undefined || !hang) return base.auditReport(...args);
        const signal = call.signal!;
        return new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => (cut.push(signal), reject(errorForAbort('identity', signal, 'audit-report'))), {
            once: true,
          }),
        );
      },
    };
    const { live, memory } = hub(identity, { catchUpTimeoutMs: 50 });
    const stream = live.subscribe({ filter: { objectType: 'LOGIN' }, since: new Date(Date.now() - 1000) });
    await until(() => cut.length > 0, 'a read cut by its deadline');
    hang = false;
    expect(abortCauseOf(cut[0]!)).toBe('deadline');
    expect(await read(stream)).toBe('uuid-1');
    expect(memory.lines().find((line) => line.msg === 'live audit catch-up read failed; retrying')).toMatchObject({
      level: 40,
      code: 'UPSTREAM_UNAVAILABLE',
    });
  });

  // Upstream pages of 500 rows: a replay of several pages, at a tenth of the upstream's page size.
  it.each([
    ['in one read', undefined],
    ['in parts, when larger than the reads may hold', 200 * 1024],
  ])('a replay of 2,000 records (four pages) arrives whole %s, oldest first, each once, then the live records', async (_how, maxReadBytes) => {
    const now = Date.now();
    const replay = Array.from({ length: 2000 }, (_, i) => auditRecord(String(i).padStart(5, '0'), now - 60_000 + Math.floor(i / 4)));
    const identity = fakeIdentity([...replay]);
    const { live } = hub(identity, { pollMs: 50, pageSize: 500, ...(maxReadBytes ? { maxReadBytes } : {}) });
    const stream = live.subscribe({ since: new Date(now - 61_000) });
    const received: string[] = [];
    for (let i = 0; i < replay.length; i++) received.push(await read(stream));
    expect(received).toEqual(replay.map((r) => r.uuid));
    identity.records.push(auditRecord('live', Date.now()));
    expect(await read(stream)).toBe('uuid-live');
    const reads = identity.queries.filter((q) => q.startIndex === 0 && q.fromMillis >= now - 61_000 && q.fromMillis < now - 50_000);
    if (maxReadBytes) expect(reads.length).toBeGreaterThan(3);
  });

  it('a replay of one busy instant, larger than the reads may hold, arrives whole in parts, by uuid', async () => {
    const now = Date.now();
    const instant = now - 2000;
    const replay = Array.from({ length: 600 }, (_, i) => auditRecord(String(i).padStart(4, '0'), instant));
    const identity = fakeIdentity([...replay]);
    const { live } = hub(identity, { pollMs: 60_000, pageSize: 50, maxReadBytes: 51 * 1024 });
    const stream = live.subscribe({ since: new Date(now - 5000) });
    const received: string[] = [];
    for (let i = 0; i < replay.length; i++) received.push(await read(stream));
    expect(received).toEqual(replay.map((r) => r.uuid));
    // The parts re-read that instant, less what they delivered.
    expect(identity.queries.filter((q) => q.startIndex === 0 && q.fromMillis === instant).length).toBeGreaterThan(2);
  });

  it('a record stamped after the catch-up\'s window is not replayed, and not delivered until its time comes', async () => {
    const now = Date.now();
    const base = fakeIdentity([auditRecord(1, now - 2000)]);
    const future = auditRecord('future', now + 10 * 365 * 86_400_000);
    const identity = {
      ...base,
      async auditReport(...args: Parameters<FakeIdentity['auditReport']>) {
        const page = await base.auditReport(...args);
        return { rows: [{ ok: true as const, record: future }, ...page.rows] };
      },
    };
    const { live } = hub(identity);
    const stream = live.subscribe({ since: new Date(now - 5000) });
    expect(await read(stream)).toBe('uuid-1');
    base.records.push(auditRecord('live', Date.now()));
    expect(await read(stream)).toBe('uuid-live');
    base.records.push(auditRecord('later', Date.now() + 20));
    expect(await read(stream)).toBe('uuid-later');
  });

  it('since: replays from that time, oldest first, then the live records, each once', async () => {
    const now = Date.now();
    const identity = fakeIdentity([auditRecord('old', now - 60_000), auditRecord(2, now - 2000), auditRecord(1, now - 3000)]);
    const { live } = hub(identity, { pageSize: 2 });
    const stream = live.subscribe({ since: new Date(now - 5000) });
    expect(await read(stream)).toBe('uuid-1');
    expect(await read(stream)).toBe('uuid-2');
    identity.records.push(auditRecord('live', Date.now()));
    expect(await read(stream)).toBe('uuid-live');
    expect(identity.queries.every((q) => q.pageSize === 2)).toBe(true);
  });

  it('resumeAfter: continues right after the token\'s record, late records included', async () => {
    const now = Date.now();
    const identity = fakeIdentity([auditRecord('delivered', now - 1000), auditRecord('late', now - 3000), auditRecord('too-old', now - 9000)]);
    const { live } = hub(identity);
    const resumeAfter = encodeResumeToken({
      filterKey: filterKey({}),
      newest: now - 1000,
      floor: now - 1000 - SETTLE_MS,
      issuedAt: now,
      delivered: [{ digest: digestOf('uuid-delivered'), timestamp: now - 1000 }],
    });
    // No poll comes in this test's time: the late record comes from the catch-up read.
    const { live: unpolled } = hub(identity, { pollMs: 60_000 });
    const resumed = unpolled.subscribe({ resumeAfter });
    expect(await read(resumed)).toBe('uuid-late');

    const stream = live.subscribe({ resumeAfter });
    expect(await read(stream)).toBe('uuid-late');
    identity.records.push(auditRecord('live', Date.now()));
    expect(await read(stream)).toBe('uuid-live');
  });

  it('what the poller finds while the catch-up reads is delivered after the catch-up', async () => {
    const now = Date.now();
    const base = fakeIdentity();
    let gate: (() => void) | undefined;
    const opened = new Promise<void>((resolve) => (gate = resolve));
    let first = true;
    const identity = {
      ...base,
      async auditReport(...args: Parameters<FakeIdentity['auditReport']>) {
        if (first) {
          first = false;
          await opened;
        }
        return base.auditReport(...args);
      },
    };
    const { live } = hub(identity);
    const stream = live.subscribe({ since: new Date(now - 5000) });
    base.records.push(auditRecord('live', now));
    await until(() => base.queries.length > 3, 'polls');
    // Ingested late: only the catch-up, whose read ends now, has it in time.
    base.records.push(auditRecord('replayed', now - 4000));
    gate!();
    expect(await read(stream)).toBe('uuid-replayed');
    expect(await read(stream)).toBe('uuid-live');
  });

  it(`at most ${CATCH_UP_TURNS} read at once; the others wait for a turn`, async () => {
    const identity = fakeIdentity();
    const { live } = hub(identity, { pollMs: 60_000 });
    identity.hold();
    const since = new Date(Date.now() - 1000);
    const streams = Array.from({ length: CATCH_UP_TURNS + 1 }, () => live.subscribe({ since }));
    await until(() => identity.queries.length === CATCH_UP_TURNS, 'the first reads');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(identity.queries).toHaveLength(CATCH_UP_TURNS);
    identity.open();
    await until(() => identity.queries.length === CATCH_UP_TURNS + 1, 'the last read');
    for (const stream of streams) await stream.return!();
  });

  it(`hold their turn until the client has taken the replay: a ${CATCH_UP_TURNS + 1}th reads once one client has`, async () => {
    const since = new Date(Date.now() - 1000);
    const identity = fakeIdentity([auditRecord(1, since.getTime() + 1)]);
    const { live } = hub(identity, { pollMs: 60_000 });
    const streams = Array.from({ length: CATCH_UP_TURNS + 1 }, () => live.subscribe({ since }));
    await until(() => identity.queries.length === CATCH_UP_TURNS, 'the first reads');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(identity.queries).toHaveLength(CATCH_UP_TURNS);
    expect(await read(streams[0]!)).toBe('uuid-1');
    await until(() => identity.queries.length === CATCH_UP_TURNS + 1, 'the last read');
  });

  it('a subscription that ends while it waits for a turn never reads', async () => {
    const identity = fakeIdentity();
    const { live } = hub(identity, { pollMs: 60_000 });
    identity.hold();
    const since = new Date(Date.now() - 1000);
    const streams = Array.from({ length: CATCH_UP_TURNS + 1 }, () => live.subscribe({ since }));
    await until(() => identity.queries.length === CATCH_UP_TURNS, 'the first reads');
    await streams[CATCH_UP_TURNS]!.return!();
    identity.open();
    for (const stream of streams.slice(0, CATCH_UP_TURNS)) await stream.return!();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(identity.queries).toHaveLength(CATCH_UP_TURNS);
    expect(live.stats().subscriptions).toBe(0);
  });

  it('a client that leaves during its catch-up read aborts it and frees its slot', async () => {
    const identity = fakeIdentity();
    const { live, memory } = hub(identity, { pollMs: 60_000 });
    identity.hold();
    const stream = live.subscribe({ since: new Date(Date.now() - 1000) });
    await until(() => identity.queries.length === 1, 'the read');
    await stream.return!();
    expect(identity.signals[0]!.aborted).toBe(true);
    expect(live.stats()).toMatchObject({ subscriptions: 0, pollers: [] });
    // The aborted read fails: nothing is retried or reported for a client that left.
    identity.failWith = new Error('aborted');
    identity.open();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(identity.queries).toHaveLength(1);
    expect(memory.lines()).toEqual([]);
  });

  it('a catch-up read failing for giveUpMs ends its stream, while the poller reads fine', async () => {
    const base = fakeIdentity([auditRecord(1, Date.now() - 100)]);
    let failFor: AbortSignal | undefined;
    let catchUpReads = 0;
    const identity = {
      ...base,
      auditReport(...args: Parameters<FakeIdentity['auditReport']>) {
        // A catch-up read has a deadline (a query's); the poller's reads have none.
        if (!failFor || args[1].expiresAt === undefined) return base.auditReport(...args);
        catchUpReads++;
        return Promise.reject(new Error('reset'));
      },
    };
    let now = Date.now();
    const { live, memory } = hub(identity, { giveUpMs: 1000, now: () => now });
    const stream = live.subscribe({ filter: { objectType: 'LOGIN' }, since: new Date(now - 1000) }) as LiveSubscriber;
    failFor = stream.signal;
    await until(() => catchUpReads > 2, 'retries');
    expect(memory.lines().find((line) => line.msg === 'live audit catch-up read failed; retrying')).toMatchObject({
      level: 40,
      code: 'UPSTREAM_UNAVAILABLE',
      filter: { objectType: 'LOGIN' },
    });
    now += 999;
    const reads = catchUpReads;
    await until(() => catchUpReads > reads + 2, 'more retries');
    expect(live.stats().subscriptions).toBe(1);
    now += 1;
    // What the poller found meanwhile, then the error.
    expect(await read(stream)).toBe('uuid-1');
    expect(await read(stream)).toBe('error UPSTREAM_UNAVAILABLE');
    expect(await read(stream)).toBe('done');
    expect(live.stats().subscriptions).toBe(0);
    expect(memory.lines().filter((line) => line.msg === 'live audit catch-up gave up: upstream failing')).toEqual([
      expect.objectContaining({ level: 40, code: 'UPSTREAM_UNAVAILABLE' }),
    ]);
  });

  it('a failing catch-up read is retried each poll interval, then ends the stream once giveUpMs has passed', async () => {
    const identity = fakeIdentity([auditRecord(1, Date.now() - 100)]);
    identity.failWith = new Error('reset');
    let now = Date.now();
    const { live, memory } = hub(identity, { pollMs: 60_000, giveUpMs: 1000, now: () => now });
    const stream = live.subscribe({ since: new Date(now - 1000) });
    await until(() => identity.queries.length === 1, 'the read');
    expect(memory.lines().some((line) => line.msg === 'live audit catch-up read failed; retrying')).toBe(true);
    live.close();
    expect(await read(stream)).toBe('done');

    const retried = hub(identity, { pollMs: 5, giveUpMs: 1000, now: () => now });
    const calls = identity.queries.length;
    const resumed = retried.live.subscribe({ since: new Date(now - 1000) });
    await until(() => identity.queries.length > calls + 3, 'retries');
    identity.failWith = undefined;
    expect(await read(resumed)).toBe('uuid-1');

    identity.failWith = new Error('reset');
    const failing = hub(identity, { pollMs: 5, giveUpMs: 1000, now: () => now });
    const doomed = failing.live.subscribe({ since: new Date(now - 1000) });
    const before = identity.queries.length;
    await until(() => identity.queries.length > before + 2, 'retries');
    now += 1000;
    expect(await read(doomed)).toBe('error UPSTREAM_UNAVAILABLE');
    expect(await read(doomed)).toBe('done');
    expect(failing.live.stats().subscriptions).toBe(0);
  });
});

describe('connections and shutdown', () => {
  it('tells a stream its connection and the configured stall and grace times', async () => {
    const identity = fakeIdentity();
    const { live } = hub(identity, { stallMs: 50, endGraceMs: 20 });
    const ended: string[] = [];
    const stream = live.subscribe({}, () => ended.push('ended'));
    await until(() => identity.queries.length > 0, 'a poll');
    identity.records.push(auditRecord(1, Date.now()), auditRecord(2, Date.now()));
    // The client takes nothing: cut off after the stall time, its connection ended after the grace.
    await until(() => ended.length > 0, 'the connection ended');
    expect(ended).toEqual(['ended']);
    expect(live.stats().subscriptions).toBe(0);
    expect(stream).toBeInstanceOf(LiveSubscriber);
  });

  it('close ends every stream cleanly, stops polling, and refuses nothing after: new streams are empty', async () => {
    const identity = fakeIdentity();
    const { live } = hub(identity);
    const a = live.subscribe({ filter: { objectType: 'LOGIN' } });
    const b = live.subscribe({});
    live.close();
    live.close();
    expect(await read(a)).toBe('done');
    expect(await read(b)).toBe('done');
    expect(live.stats()).toMatchObject({ subscriptions: 0, pollers: [] });
    const late = live.subscribe({});
    expect(await read(late)).toBe('done');
    expect(live.stats()).toMatchObject({ subscriptions: 0, started: 2, pollers: [] });
    const calls = identity.queries.length;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(identity.queries.length).toBe(calls);
  });
});

describe('events for metrics', () => {
  function observed() {
    const ends: string[] = [];
    let delivered = 0;
    return {
      ends,
      delivered: () => delivered,
      events: { onSubscriptionEnd: (reason: string) => void ends.push(reason), onRecordDelivered: () => void delivered++ },
    };
  }

  it('each record a client takes is one delivery, per subscriber; records dropped or not taken are none', async () => {
    const identity = fakeIdentity();
    const seen = observed();
    const { live } = hub(identity, { events: seen.events });
    const a = live.subscribe({});
    const b = live.subscribe({});
    const now = Date.now();
    identity.records.push(auditRecord(1, now + 1), auditRecord(2, now + 2));
    expect([await read(a), await read(a)]).toEqual(['uuid-1', 'uuid-2']);
    expect(await read(b)).toBe('uuid-1');
    expect(seen.delivered()).toBe(3);
    // uuid-2 waits for b, which leaves: it is never delivered.
    await b.return!();
    expect(seen.delivered()).toBe(3);
    expect(seen.ends).toEqual(['client']);
  });

  it('says why each subscription ended: client, shutdown, RATE_LIMITED or the upstream code, once each', async () => {
    const identity = fakeIdentity();
    const seen = observed();
    const { live } = hub(identity, { events: seen.events, maxBuffered: 1 });
    const left = live.subscribe({});
    const slow = live.subscribe({ filter: { objectType: 'LOGIN' } });
    await left.return!();
    await left.return!();
    expect(seen.ends).toEqual(['client']);

    await until(() => live.stats().pollers.every((p) => p.polls > 0), 'first polls');
    const now = Date.now();
    identity.records.push(auditRecord(1, now + 1), auditRecord(2, now + 2));
    await until(() => identity.queries.length > 4, 'polls');
    identity.records.push(auditRecord(3, now + 3));
    await until(() => seen.ends.length === 2, 'the cut-off');
    expect(seen.ends).toEqual(['client', 'RATE_LIMITED']);
    expect(await read(slow)).toBe('error RATE_LIMITED');
    expect(await read(slow)).toBe('done');

    const closed = live.subscribe({});
    live.close();
    expect(await read(closed)).toBe('done');
    expect(seen.ends).toEqual(['client', 'RATE_LIMITED', 'shutdown']);

    const failing = fakeIdentity();
    failing.failWith = new Error('reset');
    const other = observed();
    const broken = hub(failing, { events: other.events, giveUpMs: 0 }).live;
    const stream = broken.subscribe({});
    expect(await read(stream)).toBe('error UPSTREAM_UNAVAILABLE');
    expect(await read(stream)).toBe('done');
    expect(other.ends).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(other.delivered()).toBe(0);
  });

  it('a hook that throws changes nothing for the stream', async () => {
    const identity = fakeIdentity();
    const { live } = hub(identity, {
      events: {
        onRecordDelivered: () => {
          throw new Error('observer broke');
        },
        onSubscriptionEnd: () => {
          throw new Error('observer broke');
        },
      },
    });
    const stream = live.subscribe({});
    identity.records.push(auditRecord(1, Date.now() + 1));
    expect(await read(stream)).toBe('uuid-1');
    await stream.return!();
    expect(live.stats().subscriptions).toBe(0);
  });
});
