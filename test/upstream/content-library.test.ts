/** The content library: session login shared and renewed once, 404, no credentials, bad credentials. */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/lib/errors.js';
import { DEMO_USER } from '../../simulator/index.js';
import { closeAfterEachTest, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness | undefined;
closeAfterEachTest(() => harness, () => (harness = undefined));

const sessionIds = (h: UpstreamHarness) => h.sim.control.sessions().map((s) => s.id);

describe('content library', { timeout: 10_000 }, () => {
  it('logs in once for many concurrent calls, and once again after the sessions expire', { timeout: 30_000 }, async () => {
    // 60 calls at once on a busy machine: the deadline is not what this test is about.
    harness = await startUpstreamHarness({ env: { UPSTREAM_TIMEOUT_MS: '15000' } });
    const { upstreams, sim, call } = harness;
    const ids = sessionIds(harness);
    const many = () =>
      Promise.all(Array.from({ length: 60 }, (_, i) => upstreams.contentLibrary!.listUpdateSessionFiles(ids[i % ids.length]!, call)));

    const lists = await many();
    expect(lists.every(Array.isArray)).toBe(true);
    expect(sim.control.counters()).toMatchObject({ session: 1, files: 60 });

    sim.control.expireSessions();
    sim.control.resetCounters();
    await many();
    const counters = sim.control.counters();
    expect(counters.session).toBe(1);
    expect(counters.unauthorized).toBeGreaterThan(0);
    expect(counters.files).toBe(60 + counters.unauthorized);
    expect(upstreams.stats().session).toEqual({ logins: 2, failures: 0 });
    expect(harness.renewals.filter((r) => r.kind === 'session_login')).toHaveLength(2);
  });

  it('logs in with HTTP Basic, sends the session it got, and after a 401 logs in again and repeats the call once', async () => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    const id = sessionIds(harness)[0]!;
    await upstreams.contentLibrary!.listUpdateSessionFiles(id, call);
    sim.control.expireSessions();
    await upstreams.contentLibrary!.listUpdateSessionFiles(id, call);

    const received = sim.wire.requests();
    expect(received.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /rest/com/vmware/cis/session 200',
      'GET /rest/com/vmware/content/library/item/updatesession/file 200',
      'GET /rest/com/vmware/content/library/item/updatesession/file 401',
      'POST /rest/com/vmware/cis/session 200',
      'GET /rest/com/vmware/content/library/item/updatesession/file 200',
    ]);
    const basic = `Basic ${sim.wire.fingerprint(Buffer.from(`${DEMO_USER.username}:${DEMO_USER.password}`).toString('base64'))}`;
    const [login, first, refused, relogin, repeated] = received;
    for (const request of [login, relogin]) expect(request).toMatchObject({ bodyBytes: 0, headers: { authorization: basic } });
    for (const request of [first, refused, repeated]) expect(request!.query).toEqual({ update_session_id: id });
    expect(refused!.headers['vmware-api-session-id']).toBe(first!.headers['vmware-api-session-id']);
    expect(repeated!.headers['vmware-api-session-id']).not.toBe(first!.headers['vmware-api-session-id']);
    expect(harness.callLines('update-session-files').at(-1)).toMatchObject({ status: 200, credentialRetry: true, retries: 0 });
  });

  it('returns the files of a session as validated FileInfo', async () => {
    harness = await startUpstreamHarness();
    const lists = await Promise.all(
      sessionIds(harness).map((id) => harness!.upstreams.contentLibrary!.listUpdateSessionFiles(id, harness!.call)),
    );
    const rows = lists.flat();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.ok)).toBe(true);
    for (const file of rows.flatMap((row) => (row.ok ? [row.file] : []))) {
      expect(typeof file.name).toBe('string');
      expect(typeof file.source_type).toBe('string');
    }
    const line = harness.callLines('update-session-files').at(-1)!;
    expect(line).toMatchObject({ upstream: 'content-library', status: 200, retries: 0 });
    expect(line.path).not.toContain('?');
  });

  it('maps a 404 to NOT_FOUND naming the session', async () => {
    harness = await startUpstreamHarness();
    const error = await harness.upstreams
      .contentLibrary!.listUpdateSessionFiles('no-such-session', harness.call)
      .catch((e) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      code: 'NOT_FOUND',
      service: 'content-library',
      message: 'Update session no-such-session was not found.',
    });
  });

  it('sends no session when no credentials are configured', async () => {
    harness = await startUpstreamHarness({
      simulator: { users: null },
      env: { CONTENT_LIBRARY_USERNAME: undefined, CONTENT_LIBRARY_PASSWORD: undefined },
    });
    const id = sessionIds(harness)[0]!;
    await harness.upstreams.contentLibrary!.listUpdateSessionFiles(id, harness.call);
    expect(harness.sim.control.counters()).toMatchObject({ session: 0, files: 1 });
    expect(harness.upstreams.stats().session).toBeUndefined();
  });

  it('fails with UPSTREAM_UNAUTHORIZED when the login is refused, and logs in again next time', async () => {
    harness = await startUpstreamHarness();
    const { upstreams, sim, call } = harness;
    const id = sessionIds(harness)[0]!;
    sim.control.failNext(1, 401, { route: 'session' });
    const errors = await Promise.allSettled(
      Array.from({ length: 10 }, () => upstreams.contentLibrary!.listUpdateSessionFiles(id, call)),
    );
    expect(errors.every((r) => r.status === 'rejected' && r.reason.code === 'UPSTREAM_UNAUTHORIZED')).toBe(true);
    expect(sim.control.counters()).toMatchObject({ session: 1, files: 0 });
    await expect(upstreams.contentLibrary!.listUpdateSessionFiles(id, call)).resolves.toBeDefined();
    expect(sim.control.counters().session).toBe(2);
  });

  it('fails with UPSTREAM_UNAUTHORIZED on a wrong password', async () => {
    harness = await startUpstreamHarness({ env: { CONTENT_LIBRARY_PASSWORD: 'not-the-password' } });
    const id = sessionIds(harness)[0]!;
    const error = await harness.upstreams.contentLibrary!.listUpdateSessionFiles(id, harness.call).catch((e) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAUTHORIZED', service: 'content-library' });
    expect(error.message).not.toContain('not-the-password');
  });
});
