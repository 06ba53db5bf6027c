/** What a metrics layer and the stats see of content library logins, successful or refused. */
import { describe, expect, it } from 'vitest';
import { closeAfterEachTest, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness | undefined;
closeAfterEachTest(() => harness, () => (harness = undefined));

const firstSession = (h: UpstreamHarness) => h.sim.control.sessions()[0]!.id;

/** Lists a session's files; the time counts from before the call starts. */
async function listTimed(h: UpstreamHarness): Promise<{ error?: any; ms: number }> {
  const id = firstSession(h);
  const started = performance.now();
  const error = await h.upstreams.contentLibrary!.listUpdateSessionFiles(id, h.call).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

describe('content library login events', { timeout: 10_000 }, () => {
  it('reports a login as a session_login renewal of the content library that took the time it took', async () => {
    harness = await startUpstreamHarness();
    const { error, ms } = await listTimed(harness);
    expect(error).toBeUndefined();
    expect(harness.renewals).toEqual([
      { service: 'content-library', kind: 'session_login', outcome: 'success', durationMs: expect.any(Number) },
    ]);
    expect(harness.renewals[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(harness.renewals[0]!.durationMs).toBeLessThanOrEqual(Math.ceil(ms));
    expect(harness.upstreams.stats().session).toEqual({ logins: 1, failures: 0 });
  });

  it('reports a refused login with its error code, and counts it as a failure', async () => {
    harness = await startUpstreamHarness({ env: { CONTENT_LIBRARY_PASSWORD: 'not-the-password' } });
    const { error, ms } = await listTimed(harness);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAUTHORIZED' });
    expect(harness.renewals).toEqual([
      { service: 'content-library', kind: 'session_login', outcome: 'UPSTREAM_UNAUTHORIZED', durationMs: expect.any(Number) },
    ]);
    expect(harness.renewals[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(harness.renewals[0]!.durationMs).toBeLessThanOrEqual(Math.ceil(ms));
    expect(harness.upstreams.stats().session).toEqual({ logins: 1, failures: 1 });
  });

  it('sends the session it was given on every call until the service refuses it', async () => {
    harness = await startUpstreamHarness();
    const id = firstSession(harness);
    for (let i = 0; i < 3; i++) await harness.upstreams.contentLibrary!.listUpdateSessionFiles(id, harness.call);
    const sessions = harness.sim.wire
      .requests()
      .filter((r) => r.method === 'GET')
      .map((r) => r.headers['vmware-api-session-id']);
    expect(sessions).toHaveLength(3);
    expect(new Set(sessions).size).toBe(1);
    expect(sessions[0]).toEqual(expect.any(String));
    expect(harness.sim.control.counters().session).toBe(1);
  });
});
