/**
 * The per-request loaders (src/gateway/loaders.ts) over fake upstreams: one call per distinct query or
 * session within a request, each call settling on its own, at most 8 calls of a request in flight
 * (the rest wait their turn, in order) and 1000 in all, and the error of an upstream that is not
 * configured. Through the whole gateway: test/hardening/fan-out.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { BadUserInputError, UpstreamError } from '../../src/lib/errors.js';
import { createLoaders, MAX_UPSTREAM_CALLS_PER_REQUEST, REQUEST_CONCURRENCY } from '../../src/gateway/loaders.js';
import { createOperationDeadline } from '../../src/upstream/deadline.js';
import type { AuditReportPage, AuditReportQuery, CallOptions, UpdateSessionFileRow, Upstreams } from '../../src/upstream/types.js';

const CALL = { signal: new AbortController().signal } as unknown as CallOptions;
const query = (overrides: Partial<AuditReportQuery> = {}): AuditReportQuery => ({
  fromMillis: 1000,
  toMillis: 2000,
  pageSize: 10,
  startIndex: 0,
  ...overrides,
});
const pageOf = (q: AuditReportQuery) => ({ query: q }) as unknown as AuditReportPage;

/** Upstreams whose calls are recorded and answered by `answer` (a page or rows naming what was asked). */
function fakeUpstreams(options: { answer?: (what: unknown) => Promise<unknown> } = {}) {
  const calls: { what: unknown; call: CallOptions }[] = [];
  const answer = options.answer ?? (async (what: unknown) => what);
  const upstreams = {
    identity: {
      auditReport: (q: AuditReportQuery, call: CallOptions) => {
        calls.push({ what: q, call });
        return answer(q).then((value) => (value === q ? pageOf(q) : value)) as Promise<AuditReportPage>;
      },
    },
    contentLibrary: {
      listUpdateSessionFiles: (id: string, call: CallOptions) => {
        calls.push({ what: id, call });
        return answer(id).then((value) => (value === id ? [{ ok: false }] : value)) as Promise<readonly UpdateSessionFileRow[]>;
      },
    },
  } as unknown as Upstreams;
  return { upstreams, calls };
}

/** An answer that waits until released, counting how many wait at once. */
function heldAnswers() {
  const waiting: { what: unknown; release: () => void }[] = [];
  let inFlight = 0;
  let most = 0;
  const answer = (what: unknown) => {
    inFlight++;
    most = Math.max(most, inFlight);
    return new Promise<unknown>((resolve) =>
      waiting.push({
        what,
        release: () => {
          inFlight--;
          resolve(what);
        },
      }),
    );
  };
  return { answer, waiting, most: () => most };
}

const ticks = async (n = 10) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('request loaders', () => {
  it('calls the upstream once per distinct audit query, with the call options of the request', async () => {
    const { upstreams, calls } = fakeUpstreams();
    const loaders = createLoaders(upstreams, CALL);
    const variants = [
      query(),
      query({ fromMillis: 1001 }),
      query({ toMillis: 2001 }),
      query({ objectType: 'User' }),
      query({ objectType: 'Group' }),
      query({ action: 'Create' }),
      query({ action: 'Delete' }),
      query({ pageSize: 11 }),
      query({ startIndex: 10 }),
    ];
    const pages = await Promise.all([...variants, ...variants.map((q) => ({ ...q }))].map((q) => loaders.auditReport.load(q)));
    expect(calls.map((c) => c.what)).toEqual(variants);
    expect(calls.every((c) => c.call === CALL)).toBe(true);
    expect(pages).toEqual([...variants, ...variants].map(pageOf));
    // Read again later in the request: the same loader, nothing called again.
    expect(loaders.auditReport).toBe(loaders.auditReport);
    await loaders.auditReport.load(query({ objectType: 'User' }));
    expect(calls).toHaveLength(variants.length);
    expect(loaders.upstreamCalls()).toBe(variants.length);
  });

  it('calls the content library once per session id', async () => {
    const { upstreams, calls } = fakeUpstreams();
    const loaders = createLoaders(upstreams, CALL);
    await Promise.all(['s1', 's2', 's1'].map((id) => loaders.updateSessionFiles.load(id)));
    expect(loaders.updateSessionFiles).toBe(loaders.updateSessionFiles);
    await loaders.updateSessionFiles.load('s2');
    expect(calls).toEqual([
      { what: 's1', call: CALL },
      { what: 's2', call: CALL },
    ]);
    expect(loaders.upstreamCalls()).toBe(2);
  });

  it('fails only the item whose call failed, a thrown value or a synchronous throw included', async () => {
    const { upstreams } = fakeUpstreams({
      answer: async (what) => {
        if (what === 'bad') throw new UpstreamError('NOT_FOUND', 'content-library', 'no such session');
        if (what === 'odd') throw 'plain text' as unknown as Error;
        return what;
      },
    });
    (upstreams.identity as { auditReport: unknown }).auditReport = (q: AuditReportQuery) => {
      if (q.startIndex === 1) throw new Error('thrown at once');
      return Promise.resolve(pageOf(q));
    };
    const loaders = createLoaders(upstreams, CALL);
    const files = await Promise.allSettled(['good', 'bad', 'odd'].map((id) => loaders.updateSessionFiles.load(id)));
    expect(files[0]).toEqual({ status: 'fulfilled', value: [{ ok: false }] });
    expect(files[1]).toMatchObject({ status: 'rejected', reason: { code: 'NOT_FOUND', message: 'no such session' } });
    expect(files[2]).toMatchObject({ status: 'rejected', reason: { message: 'plain text' } });
    expect((files[2] as PromiseRejectedResult).reason).toBeInstanceOf(Error);

    const pages = await Promise.allSettled([0, 1, 2].map((startIndex) => loaders.auditReport.load(query({ startIndex }))));
    expect(pages.map((p) => p.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((pages[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'thrown at once' });
  });

  it('answers every item of an upstream that is not configured with UPSTREAM_NOT_CONFIGURED', async () => {
    const loaders = createLoaders({} as Upstreams, CALL);
    const [page, files] = await Promise.allSettled([loaders.auditReport.load(query()), loaders.updateSessionFiles.load('s1')]);
    expect((page as PromiseRejectedResult).reason).toBeInstanceOf(UpstreamError);
    expect((page as PromiseRejectedResult).reason).toMatchObject({
      code: 'UPSTREAM_NOT_CONFIGURED',
      service: 'identity',
      message: 'The identity upstream is not configured on this gateway.',
    });
    expect((files as PromiseRejectedResult).reason).toMatchObject({
      code: 'UPSTREAM_NOT_CONFIGURED',
      service: 'content-library',
      message: 'The content-library upstream is not configured on this gateway.',
    });
    expect(loaders.upstreamCalls()).toBe(0);
  });

  it(`keeps at most ${REQUEST_CONCURRENCY} calls of a request in flight, starting the waiting ones in order`, async () => {
    expect(REQUEST_CONCURRENCY).toBe(8);
    const held = heldAnswers();
    const { upstreams, calls } = fakeUpstreams({ answer: held.answer });
    const loaders = createLoaders(upstreams, CALL);
    const ids = Array.from({ length: 12 }, (_, i) => `s${i}`);
    const all = Promise.all(ids.map((id) => loaders.updateSessionFiles.load(id)));
    await ticks();
    expect(calls.map((c) => c.what)).toEqual(ids.slice(0, 8));
    // Each call that ends lets the next waiting one start, never more.
    held.waiting[2]!.release();
    await ticks();
    expect(calls.map((c) => c.what)).toEqual(ids.slice(0, 9));
    held.waiting[0]!.release();
    held.waiting[5]!.release();
    await ticks();
    expect(calls.map((c) => c.what)).toEqual(ids.slice(0, 11));
    while (held.waiting.some((w) => w)) {
      for (const w of held.waiting.splice(0)) w.release();
      await ticks();
    }
    expect(await all).toHaveLength(12);
    expect(held.most()).toBe(8);
  });

  it("makes no call whose turn comes after the request's deadline: each is timed out on its own item", async () => {
    const held = heldAnswers();
    const { upstreams, calls } = fakeUpstreams({ answer: held.answer });
    const deadline = createOperationDeadline(30);
    const call = { log: CALL.log, signal: deadline.signal, expiresAt: deadline.expiresAt } as CallOptions;
    const loaders = createLoaders(upstreams, call);
    const ids = Array.from({ length: REQUEST_CONCURRENCY + 2 }, (_, i) => `s${i}`);
    const all = Promise.allSettled(ids.map((id) => loaders.updateSessionFiles.load(id)));
    await ticks();
    expect(calls).toHaveLength(REQUEST_CONCURRENCY);
    await new Promise((resolve) => setTimeout(resolve, 60));
    for (let round = 0; round < 2; round++) {
      for (const waiting of held.waiting.splice(0)) waiting.release();
      await ticks();
    }
    const settled = await all;
    expect(calls).toHaveLength(REQUEST_CONCURRENCY);
    expect(settled.slice(0, REQUEST_CONCURRENCY).every((s) => s.status === 'fulfilled')).toBe(true);
    for (const late of settled.slice(REQUEST_CONCURRENCY)) {
      expect(late).toMatchObject({
        status: 'rejected',
        reason: { code: 'UPSTREAM_UNAVAILABLE', message: expect.stringMatching(/timed out/), detail: { waitedFor: 'update-session-files', failure: 'deadline' } },
      });
    }
  });

  it('frees a slot when its call fails, and serves any number of calls one after another', async () => {
    const { upstreams, calls } = fakeUpstreams({ answer: async (what) => Promise.reject(new Error(`failed ${String(what)}`)) });
    const loaders = createLoaders(upstreams, CALL);
    for (let i = 0; i < 12; i++) await expect(loaders.updateSessionFiles.load(`s${i}`)).rejects.toThrow(`failed s${i}`);
    expect(calls).toHaveLength(12);
    const ok = createLoaders(fakeUpstreams().upstreams, CALL);
    for (let i = 0; i < 12; i++) expect(await ok.auditReport.load(query({ startIndex: i }))).toEqual(pageOf(query({ startIndex: i })));
  }, 5000);

  it(`makes at most ${MAX_UPSTREAM_CALLS_PER_REQUEST} upstream calls in a request, and fails the calls beyond`, async () => {
    expect(MAX_UPSTREAM_CALLS_PER_REQUEST).toBe(1000);
    const { upstreams, calls } = fakeUpstreams();
    const loaders = createLoaders(upstreams, CALL);
    const pages = await Promise.allSettled(Array.from({ length: 999 }, (_, startIndex) => loaders.auditReport.load(query({ startIndex }))));
    expect(pages.every((p) => p.status === 'fulfilled')).toBe(true);
    const [last, over] = await Promise.allSettled([loaders.updateSessionFiles.load('s1000'), loaders.updateSessionFiles.load('s1001')]);
    expect(last.status).toBe('fulfilled');
    const refusal = (over as PromiseRejectedResult).reason as Error;
    expect(refusal).toBeInstanceOf(BadUserInputError);
    expect(refusal.message).toBe('This request needs more than 1000 upstream calls; ask for less in one request.');
    expect(calls).toHaveLength(1000);
    expect(loaders.upstreamCalls()).toBe(1000);
    // Another request has a budget of its own.
    expect(await createLoaders(upstreams, CALL).updateSessionFiles.load('s1')).toEqual([{ ok: false }]);
  });
});
