/**
 * An upstream's error body may repeat what it was sent. Of that body only an error type that looks
 * like one (an OAuth code, a vAPI type) is kept for the log and the 404 decision, and never one
 * that repeats a credential of the call: a header's value, a Basic credential's user or password,
 * a bearer token, a session id, a refresh token in the body.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_CLIENT, DEMO_USER } from '../../simulator/index.js';
import { scriptedEnv, startScriptedUpstream, type ScriptedRequest, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { closeAfterEachTest, fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let upstream: ScriptedUpstream;
beforeAll(async () => {
  upstream = await startScriptedUpstream();
});
afterAll(() => upstream.close());

// Each test its own harness (own log), checked for secrets after it.
let harness: UpstreamHarness | undefined;
closeAfterEachTest(() => harness, () => (harness = undefined));
beforeEach(async () => {
  upstream.clear();
  harness = await startUpstreamHarness({ env: scriptedEnv(upstream) });
});

const header = (name: string) => (request: ScriptedRequest) => String(request.headers[name]);
const bearerToken = (request: ScriptedRequest) => header('authorization')(request).replace(/^Bearer /, '');
const sessionId = header('vmware-api-session-id');

interface Refusal {
  code: string;
  detail: Record<string, unknown>;
}

/** The error of a call whose upstream answered `status` with `body` (built from the request). */
async function refusedWith(
  route: 'token' | 'audit' | 'session' | 'files',
  status: number,
  body: (request: ScriptedRequest) => unknown,
): Promise<Refusal> {
  const { upstreams, call } = harness!;
  const identityCall = () => upstreams.identity!.auditReport(fullWindow(1), call);
  const libraryCall = () => upstreams.contentLibrary!.listUpdateSessionFiles('some-session', call);
  const callOf = route === 'token' || route === 'audit' ? identityCall : libraryCall;
  // A credential already held, so the refusal is the route's own.
  if (route === 'audit' || route === 'files') await callOf();
  upstream.answerNext(route, { status, body });
  return callOf().then(
    () => expect.fail('the call succeeded'),
    (error: Refusal) => error,
  );
}

describe('an error type that repeats a credential', { timeout: 10_000 }, () => {
  it.each([
    ['token', 'its Basic header and the client secret', 400, (r: ScriptedRequest) => ({ error: `invalid_client ${header('authorization')(r)} ${DEMO_CLIENT.secret}` })],
    ['token', 'the client secret alone', 400, () => ({ error: DEMO_CLIENT.secret })],
    ['token', 'the client id in an identifier', 401, () => ({ error: `invalid_client.${DEMO_CLIENT.id}` })],
    ['audit', 'its bearer header', 500, (r: ScriptedRequest) => ({ error: `x Bearer ${bearerToken(r)}` })],
    ['audit', 'the access token alone', 500, (r: ScriptedRequest) => ({ error: bearerToken(r) })],
    ['session', 'the password in a vAPI type', 400, () => ({ type: `com.vmware.vapi.std.errors.${DEMO_USER.password}` })],
    ['files', 'the session id after a word', 500, (r: ScriptedRequest) => ({ type: `x ${sessionId(r)}` })],
    ['files', 'the session id alone', 500, (r: ScriptedRequest) => ({ type: sessionId(r) })],
  ] as const)('is left out: the %s route echoing %s', async (route, _echo, status, body) => {
    const error = await refusedWith(route, status, body);
    expect(error.detail).toMatchObject({ status });
    expect(error.detail).not.toHaveProperty('upstreamError');
  });

  it('is left out when a refused refresh grant repeats the refresh token it was sent', async () => {
    const identity = harness!.upstreams.identity!;
    // Already expired: the next call renews it with the refresh grant.
    upstream.answerNext('token', { body: { access_token: 'short-lived-token', expires_in: 0, refresh_token: 'refresh-token-to-echo' } });
    await identity.auditReport(fullWindow(1), harness!.call);
    upstream.answerNext('token', {
      status: 400,
      body: (r: ScriptedRequest) => ({ error: new URLSearchParams(r.body).get('refresh_token') }),
    });
    await identity.auditReport(fullWindow(1), harness!.call);
    const refused = harness!.callLines('token').find((line) => line.status === 400);
    expect(refused?.err.detail).toMatchObject({ status: 400 });
    expect(refused?.err.detail).not.toHaveProperty('upstreamError');
    expect(harness!.memory.text()).not.toContain('refresh-token-to-echo');
  });
});

describe('an error type that repeats nothing sent', { timeout: 10_000 }, () => {
  it.each([
    ['token', 400, { error: 'invalid_client' }, 'UPSTREAM_UNAUTHORIZED', 'invalid_client'],
    ['audit', 500, { error: 'server_error' }, 'UPSTREAM_UNAVAILABLE', 'server_error'],
    ['files', 404, { type: 'com.vmware.vapi.std.errors.not_found' }, 'NOT_FOUND', 'com.vmware.vapi.std.errors.not_found'],
  ] as const)('is kept for the log: %s answering %i', async (route, status, body, code, upstreamError) => {
    const error = await refusedWith(route, status, () => body);
    expect(error).toMatchObject({ code, detail: { status, upstreamError } });
  });
});
