/**
 * UPSTREAM_MAX_BYTES_IN_FLIGHT over real HTTP: the answer bytes being received and parsed, both
 * services together, count against one bound. An answer that would take them past it fails its call
 * at once (UPSTREAM_UNAVAILABLE, one log line, one refusal event), later answers are read again once
 * bytes are given back, and they are given back however a call ends: success, a broken answer, an
 * error status, the caller's abort, the deadline.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/lib/config.js';
import { UpstreamError } from '../../src/lib/errors.js';
import { createLogger } from '../../src/lib/logger.js';
import { createMetrics } from '../../src/gateway/plugins/observability/metrics.js';
import { createUpstreams, SMALL_ANSWER_BYTES, type GatewayUpstreams } from '../../src/upstream/index.js';
import type { AnswerRefusedEvent, AuditReportQuery } from '../../src/upstream/types.js';
import { MemoryLog } from '../helpers/memory-log.js';
import {
  scriptedAuditPage,
  scriptedAuditRow,
  scriptedEnv,
  startScriptedUpstream,
  type ScriptedAnswer,
  type ScriptedUpstream,
} from '../helpers/scripted-upstream.js';

const KB = 1024;
const BOUND = 192 * KB;
/** Where a paused answer stops: its bytes so far are held until it goes on. */
const PAUSED_AT = 100 * KB;

/** A page of `rows` rows of 12 KB each: 10 of them, some 123 KB, within the 128 KB body cap. */
const page = (rows: number) => scriptedAuditPage(Array.from({ length: rows }, (_, i) => scriptedAuditRow(i, { pad: 'x'.repeat(12 * KB) })));
const QUERY: AuditReportQuery = { fromMillis: 0, toMillis: 1_800_000_000_000, pageSize: 10, startIndex: 0 };

let upstream: ScriptedUpstream;
const opened: GatewayUpstreams[] = [];
/** Every pause a test started; let go after it, so no answer is left half sent. */
const pauses: (() => void)[] = [];

beforeAll(async () => {
  upstream = await startScriptedUpstream();
});
afterEach(async () => {
  for (const resume of pauses.splice(0)) resume();
  await Promise.all(opened.splice(0).map((upstreams) => upstreams.close()));
  upstream.clear();
});
afterAll(() => upstream.close());

function upstreamsWith(env: Record<string, string> = {}) {
  const config = loadConfig({
    ...scriptedEnv(upstream),
    IDENTITY_CLIENT_ID: 'gateway',
    IDENTITY_CLIENT_SECRET: 'secret',
    GATEWAY_ALLOW_ANONYMOUS: 'true',
    AUDIT_CACHE_MAX_BYTES: '0',
    UPSTREAM_TIMEOUT_MS: '5000',
    UPSTREAM_MAX_BODY_BYTES: String(128 * KB),
    UPSTREAM_MAX_BYTES_IN_FLIGHT: String(BOUND),
    ...env,
  });
  const refusals: AnswerRefusedEvent[] = [];
  const metrics = createMetrics();
  const events = {
    onAnswerRefused(event: AnswerRefusedEvent) {
      refusals.push(event);
      metrics.upstreamEvents.onAnswerRefused!(event);
    },
  };
  const upstreams = createUpstreams(config, { retry: { maxRetries: 0 }, events });
  opened.push(upstreams);
  const memory = new MemoryLog();
  const log = createLogger({ level: 'debug', destination: memory });
  const inFlight = () => upstreams.stats().answerBytesInFlight;
  const refusedTotal = async (service: string) =>
    (await metrics.registry.getSingleMetric('gateway_upstream_answers_refused_total')!.get()).values.find(
      (value) => value.labels['service'] === service,
    )?.value;
  return { upstreams, identity: upstreams.identity!, log, memory, refusals, refusedTotal, inFlight };
}

/** `answer`, sent up to PAUSED_AT, the rest when the returned resume is called. */
function paused(answer: Omit<ScriptedAnswer, 'pause'>): { answer: ScriptedAnswer; resume: () => void } {
  let resume!: () => void;
  const until = new Promise<void>((resolve) => (resume = resolve));
  pauses.push(resume);
  return { answer: { ...answer, pause: { afterBytes: PAUSED_AT, until } }, resume };
}

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as UpstreamError);

describe('answer bytes in flight', () => {
  it('refuses an answer that would take them past the bound at once, and reads answers again once bytes are given back', async () => {
    const { upstreams, identity, log, memory, refusals, refusedTotal, inFlight } = upstreamsWith();
    const first = paused({ body: page(10) });
    upstream.answerNext('audit', first.answer, { body: page(10) });
    const held = identity.auditReport(QUERY, { log });
    await vi.waitFor(() => expect(inFlight()).toBe(PAUSED_AT));

    // A 123 KB page next to the 100 KB held passes 192 KB: refused while the first still waits.
    const refused = await failure(identity.auditReport(QUERY, { log }));
    expect(refused).toBeInstanceOf(UpstreamError);
    expect(refused).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'identity' });
    expect(refused!.message).toBe(
      'The identity service could not be read: the gateway is receiving too many upstream answers at once; retry later.',
    );
    expect(inFlight()).toBe(PAUSED_AT);
    expect(refusals).toEqual([{ service: 'identity', route: 'audit-report', reason: 'bytes_in_flight' }]);
    expect(await refusedTotal('identity')).toBe(1);
    expect(await refusedTotal('content-library')).toBe(0);
    const lines = memory.lines().filter((line) => line.level >= 40);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'upstream call failed', code: 'UPSTREAM_UNAVAILABLE', route: 'audit-report' });
    expect(lines[0]!.err.detail).toMatchObject({ maxAnswerBytesInFlight: BOUND, problem: expect.stringMatching(/UPSTREAM_MAX_BYTES_IN_FLIGHT/) });

    first.resume();
    expect((await held).rows).toHaveLength(10);
    expect(inFlight()).toBe(0);
    upstream.answerNext('audit', { body: page(10) });
    expect((await identity.auditReport(QUERY, { log })).rows).toHaveLength(10);
    expect(inFlight()).toBe(0);
    expect(upstreams.stats().answerBytesInFlight).toBe(0);
  });

  it('is one bound for both services', async () => {
    const { upstreams, identity, log, refusals, inFlight } = upstreamsWith();
    const first = paused({ body: page(10) });
    upstream.answerNext('audit', first.answer);
    const held = identity.auditReport(QUERY, { log });
    await vi.waitFor(() => expect(inFlight()).toBe(PAUSED_AT));

    const files = Array.from({ length: 100 }, (_, i) => ({ name: `${'f'.repeat(1200)}-${i}.iso`, source_type: 'PUSH' }));
    upstream.answerNext('files', { body: { value: files } });
    const refused = await failure(upstreams.contentLibrary!.listUpdateSessionFiles('some-session', { log }));
    expect(refused).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', service: 'content-library' });
    expect(refusals).toEqual([{ service: 'content-library', route: 'update-session-files', reason: 'bytes_in_flight' }]);

    first.resume();
    await held;
    upstream.answerNext('files', { body: { value: files } });
    expect(await upstreams.contentLibrary!.listUpdateSessionFiles('some-session', { log })).toHaveLength(100);
    expect(inFlight()).toBe(0);
  });

  it(`counts nothing for an answer of up to ${SMALL_ANSWER_BYTES / KB} KB: it is read however full the bound is`, async () => {
    const { identity, log, inFlight } = upstreamsWith();
    const first = paused({ body: page(10) });
    const second = paused({ body: page(10) });
    upstream.answerNext('audit', first.answer);
    const held = [identity.auditReport(QUERY, { log })];
    await vi.waitFor(() => expect(inFlight()).toBe(PAUSED_AT));
    // 100 KB held: the second answer's first 64 KB are counted once it is past them, so it is refused.
    upstream.answerNext('audit', second.answer);
    expect(await failure(identity.auditReport(QUERY, { log }))).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });

    const small = scriptedAuditPage([scriptedAuditRow(0, { pad: 'x'.repeat(60 * KB) })]);
    expect(JSON.stringify(small).length).toBeLessThan(SMALL_ANSWER_BYTES);
    upstream.answerNext('audit', { body: small });
    expect((await identity.auditReport(QUERY, { log })).rows).toHaveLength(1);
    expect(inFlight()).toBe(PAUSED_AT);
    first.resume();
    await Promise.all(held);
    expect(inFlight()).toBe(0);
  });

  describe('are given back however a call ends', () => {
    it.each([
      ['a body that is not JSON', { body: 'x'.repeat(120 * KB) }, 'UPSTREAM_INVALID_RESPONSE'],
      ['a page with more rows than asked', { body: page(10 + 1) }, 'UPSTREAM_INVALID_RESPONSE'],
      ['an error status with a large body', { status: 400, body: { error: 'invalid_request', note: 'x'.repeat(120 * KB) } }, 'UPSTREAM_INVALID_RESPONSE'],
      ['a 503 with a large body', { status: 503, body: { note: 'x'.repeat(120 * KB) } }, 'UPSTREAM_UNAVAILABLE'],
    ] as const)('%s', async (_case, answer, code) => {
      const { identity, log, inFlight } = upstreamsWith();
      const { answer: pausedAnswer, resume } = paused(answer);
      upstream.answerNext('audit', pausedAnswer);
      const call = failure(identity.auditReport(QUERY, { log }));
      await vi.waitFor(() => expect(inFlight()).toBe(PAUSED_AT));
      resume();
      expect(await call).toMatchObject({ code });
      expect(inFlight()).toBe(0);
    });

    it("the caller's abort", async () => {
      const { identity, log, inFlight } = upstreamsWith();
      upstream.answerNext('audit', paused({ body: page(10) }).answer);
      const caller = new AbortController();
      const call = failure(identity.auditReport(QUERY, { log, signal: caller.signal }));
      await vi.waitFor(() => expect(inFlight()).toBe(PAUSED_AT));
      caller.abort();
      expect(await call).toMatchObject({ name: 'CallerGoneError', detail: { upstream: 'identity', route: 'audit-report' } });
      expect(inFlight()).toBe(0);
    });

    it('the deadline', async () => {
      const { identity, log, inFlight } = upstreamsWith({ UPSTREAM_TIMEOUT_MS: '500' });
      upstream.answerNext('audit', paused({ body: page(10) }).answer);
      const call = failure(identity.auditReport(QUERY, { log }));
      await vi.waitFor(() => expect(inFlight()).toBe(PAUSED_AT));
      expect(await call).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', detail: { failure: 'timeout' } });
      expect(inFlight()).toBe(0);
    });
  });
});
