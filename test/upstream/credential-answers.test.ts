/**
 * A token or session answer whose credential no header can carry, or that is far too long, is an
 * invalid answer and is never stored: the next call asks again. Kept, it would make every later
 * call fail inside the HTTP client before anything is sent, with no 401 ever coming back to drop it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_SESSION_ID_LENGTH, MAX_TOKEN_LENGTH } from '../../src/upstream/schemas.js';
import { scriptedEnv, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { findLeakedSecrets, fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let upstream: ScriptedUpstream;
let harness: UpstreamHarness;
beforeAll(async () => {
  upstream = await startScriptedUpstream();
  harness = await startUpstreamHarness({ env: scriptedEnv(upstream) });
});
beforeEach(() => upstream.clear());
afterAll(async () => {
  expect(findLeakedSecrets(harness)).toEqual([]);
  await harness.close();
  await upstream.close();
});

const invalid = { code: 'UPSTREAM_INVALID_RESPONSE', detail: { problem: 'body does not match its schema' } };
const grantOf = (body: string) => new URLSearchParams(body).get('grant_type');

describe('a token answer', { timeout: 10_000 }, () => {
  it.each([
    ['an access token with CR/LF', { access_token: 'A\r\nX-Injected: 1', refresh_token: 'refresh-1' }],
    ['an access token with a space', { access_token: 'spaced access-token', refresh_token: 'refresh-1' }],
    ['an access token beyond Latin-1', { access_token: '\u00ff\u0100', refresh_token: 'refresh-1' }],
    ['an access token over 16 KB', { access_token: 'a'.repeat(MAX_TOKEN_LENGTH + 1), refresh_token: 'refresh-1' }],
    ['a refresh token with a line break', { access_token: 'fine-access-token', refresh_token: 'refresh\n1' }],
    ['a refresh token over 16 KB', { access_token: 'fine-access-token', refresh_token: 'r'.repeat(MAX_TOKEN_LENGTH + 1) }],
  ])('with %s is an invalid answer, never stored: the next call asks again', async (_case, token) => {
    const identity = harness.recreate().identity!;
    upstream.answerNext('token', { body: { ...token, expires_in: 10_799 } });
    await expect(identity.auditReport(fullWindow(1), harness.call)).rejects.toMatchObject(invalid);
    expect(upstream.requests('audit')).toHaveLength(0);

    await expect(identity.auditReport(fullWindow(1), harness.call)).resolves.toEqual({ rows: [] });
    // Neither of its tokens was kept: a new client_credentials grant, its token on the wire.
    const tokenRequests = upstream.requests('token');
    expect(tokenRequests.map((request) => grantOf(request.body))).toEqual(['client_credentials', 'client_credentials']);
    expect(upstream.requests('audit').map((request) => request.headers.authorization)).toEqual([
      expect.stringMatching(/^Bearer good-access-token-\d+$/),
    ]);
  });

  it('with a 16 KB access token (a large JWT) is used as it is', async () => {
    const identity = harness.recreate().identity!;
    const large = 'j'.repeat(MAX_TOKEN_LENGTH);
    upstream.answerNext('token', { body: { access_token: large, expires_in: 10_799 } });
    await expect(identity.auditReport(fullWindow(1), harness.call)).resolves.toEqual({ rows: [] });
    expect(upstream.requests('audit')[0]?.headers.authorization).toBe(`Bearer ${large}`);
  });
});

describe('a session login answer', { timeout: 10_000 }, () => {
  it.each([
    ['CR/LF', 'a\r\nb'],
    ['characters beyond Latin-1', '\u00ff\u0100'],
    ['a space', 'session id'],
    ['over 1024 characters', 's'.repeat(MAX_SESSION_ID_LENGTH + 1)],
  ])('with %s in the session id is an invalid answer, never stored: the next call logs in again', async (_case, value) => {
    const library = harness.recreate().contentLibrary!;
    upstream.answerNext('session', { body: { value } });
    await expect(library.listUpdateSessionFiles('some-session', harness.call)).rejects.toMatchObject(invalid);
    expect(upstream.requests('files')).toHaveLength(0);

    await expect(library.listUpdateSessionFiles('some-session', harness.call)).resolves.toEqual([]);
    expect(upstream.requests('session')).toHaveLength(2);
    expect(upstream.requests('files').map((request) => request.headers['vmware-api-session-id'])).toEqual([
      expect.stringMatching(/^good-session-id-\d+$/),
    ]);
  });
});
