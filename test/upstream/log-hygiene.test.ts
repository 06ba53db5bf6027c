/**
 * Over a run that exercises every credential path (grant, refresh, fallback, 401 recovery, login,
 * re-login, refusals, malformed answers), no credential reaches the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findLeakedSecrets, fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness;
beforeAll(async () => {
  harness = await startUpstreamHarness({ env: { UPSTREAM_TIMEOUT_MS: '1500' } });
});
afterAll(async () => {
  await harness.close();
});

describe('log hygiene', { timeout: 15_000 }, () => {
  it('never logs a client secret, password, access token, refresh token or session id', async () => {
    const { upstreams, sim, call } = harness;
    const identity = upstreams.identity!;
    const library = upstreams.contentLibrary!;
    const id = sim.control.sessions()[0]!.id;
    const settle = (p: Promise<unknown>) => p.catch((e: unknown) => e);

    await identity.auditReport(fullWindow(2), call);
    await library.listUpdateSessionFiles(id, call);
    sim.control.expireTokens();
    sim.control.expireSessions();
    await identity.auditReport(fullWindow(2), call);
    await library.listUpdateSessionFiles(id, call);
    sim.control.expireTokens({ refreshTokensToo: true });
    await identity.auditReport(fullWindow(2), call);
    sim.control.failNext(1, 401, { route: 'token' });
    sim.control.expireTokens({ refreshTokensToo: true });
    await settle(identity.auditReport(fullWindow(2), call));
    sim.control.failNext(1, 401, { route: 'session' });
    sim.control.expireSessions();
    await settle(library.listUpdateSessionFiles(id, call));
    sim.control.malformNext('token', 1);
    sim.control.expireTokens({ refreshTokensToo: true });
    await settle(identity.auditReport(fullWindow(2), call));
    sim.control.malformNext('session', 1);
    sim.control.expireSessions();
    await settle(library.listUpdateSessionFiles(id, call));
    await settle(library.listUpdateSessionFiles('missing', call));
    sim.control.clearFaults();
    await identity.auditReport(fullWindow(2), call);
    await library.listUpdateSessionFiles(id, call);

    const secrets = harness.secrets();
    // client secret, password, two Basic credentials, and several tokens and session ids
    expect(secrets.length).toBeGreaterThanOrEqual(8);
    expect(harness.memory.lines().length).toBeGreaterThan(10);
    expect(findLeakedSecrets(harness)).toEqual([]);
    expect(harness.memory.text()).not.toMatch(/Bearer |Basic /);
  });
});
