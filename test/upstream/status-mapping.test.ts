/** What each upstream status becomes for the caller, and how the failure is logged. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/lib/errors.js';
import { errorForTransport, summarizeIssues } from '../../src/upstream/error-mapping.js';
import { createUpstreams } from '../../src/upstream/index.js';
import { fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness;
beforeAll(async () => {
  harness = await startUpstreamHarness();
  await harness.upstreams.identity!.auditReport(fullWindow(1), harness.call);
});
beforeEach(() => {
  harness.sim.control.clearFaults();
  harness.sim.wire.clear();
});
afterAll(() => harness.close());

const audit = () => harness.upstreams.identity!.auditReport(fullWindow(1), harness.call).then(() => undefined, (e: unknown) => e);

describe('upstream statuses', { timeout: 10_000 }, () => {
  it.each([
    [400, 'UPSTREAM_INVALID_RESPONSE', 'The identity service answered with an unexpected status.'],
    [403, 'UPSTREAM_UNAUTHORIZED', "The identity service rejected the gateway's credentials."],
    [404, 'UPSTREAM_INVALID_RESPONSE', 'The identity service answered with an unexpected status.'],
    [408, 'UPSTREAM_UNAVAILABLE', 'The identity service is unavailable.'],
    [409, 'UPSTREAM_INVALID_RESPONSE', 'The identity service answered with an unexpected status.'],
    [500, 'UPSTREAM_UNAVAILABLE', 'The identity service is unavailable.'],
    [501, 'UPSTREAM_UNAVAILABLE', 'The identity service is unavailable.'],
    [302, 'UPSTREAM_INVALID_RESPONSE', 'The identity service answered with an unexpected status.'],
  ])('a %i on the audit report is %s, asked once', async (status, code, message) => {
    harness.sim.control.failNext(1, status, { route: 'audit' });
    const error = await audit();
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code, message, service: 'identity', detail: { route: 'audit-report', status } });
    expect(harness.sim.wire.requests('audit').map((r) => r.status)).toEqual([status]);
    const line = harness.callLines('audit-report').at(-1)!;
    expect(line).toMatchObject({ level: 40, msg: 'upstream call failed', code, status, retries: 0 });
  });

  it('a 401 after the one renewal is UPSTREAM_UNAUTHORIZED, with the OAuth error type in the log', async () => {
    harness.sim.control.failNext(2, 401, { route: 'audit' });
    const error = await audit();
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAUTHORIZED', detail: { status: 401, upstreamError: 'invalid_token' } });
    expect(harness.sim.wire.requests().map((r) => `${r.route} ${r.status}`)).toEqual(['audit 401', 'token 200', 'audit 401']);
    expect(harness.callLines('audit-report').at(-1)).toMatchObject({ credentialRetry: true, status: 401 });
  });

  it('a missing update session is logged at info, not as a fault', async () => {
    const error = await harness.upstreams.contentLibrary!.listUpdateSessionFiles('no-such-session', harness.call).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'NOT_FOUND', detail: { status: 404 } });
    expect(harness.callLines('update-session-files').at(-1)).toMatchObject({ level: 30, code: 'NOT_FOUND' });
  });
});

describe('observers', { timeout: 10_000 }, () => {
  it('a metrics hook that throws never breaks a call', async () => {
    const throwing = () => {
      throw new Error('observer failed');
    };
    const upstreams = createUpstreams(harness.config, {
      events: { onUpstreamCall: throwing, onCredentialRenewal: throwing, onCacheLookup: throwing },
    });
    try {
      await expect(upstreams.identity!.auditReport(fullWindow(1), harness.call)).resolves.toMatchObject({ rows: [expect.anything()] });
    } finally {
      await upstreams.close();
    }
  });
});

describe('transport failures and issues', () => {
  it('names the service in each transport message', () => {
    expect(errorForTransport('content-library', 'deadline', { route: 'x' })).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: 'The content library service did not answer before the request timed out.',
      detail: { route: 'x', failure: 'deadline' },
    });
    expect(errorForTransport('identity', 'timeout', {}).message).toBe('The identity service did not answer in time.');
  });

  it('summarizes at most the first issues, each as path, code and message', () => {
    const issues = Array.from({ length: 25 }, (_, i) => ({ path: ['data', i], code: 'custom' as const, message: `bad ${i}`, input: 'secret' }));
    const summary = summarizeIssues(issues);
    expect(summary).toHaveLength(20);
    expect(summary[3]).toEqual({ path: 'data.3', code: 'custom', message: 'bad 3' });
    expect(summarizeIssues(issues, 2)).toHaveLength(2);
  });
});
