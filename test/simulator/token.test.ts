import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenResponseSchema } from '../../src/upstream/identity/schemas.js';
import { tokenErrorSchema } from '../helpers/upstream-shapes.js';
import { DEMO_CLIENT, startSimulator, type Simulator } from '../../simulator/index.js';
import { auditRequest, basic, manualClock, tokenRequest, type TokenAnswer } from '../helpers/simulator-client.js';

const clock = manualClock();
let sim: Simulator;
const demoBasic = { authorization: basic(DEMO_CLIENT.id, DEMO_CLIENT.secret) };
const other = { id: 'reporting', secret: 's3cr:et+%/' };

beforeAll(async () => {
  sim = await startSimulator({ now: clock.now, eventCount: 50, clients: [DEMO_CLIENT, other] });
});
afterAll(() => sim.close());

async function grant(form: Record<string, string>, headers: Record<string, string> = demoBasic, query = '') {
  return tokenRequest(sim, form, headers, query);
}

async function clientCredentials(): Promise<TokenAnswer> {
  const res = await grant({ grant_type: 'client_credentials' });
  expect(res.status).toBe(200);
  return res.json as TokenAnswer;
}

function decodePart(part: string | undefined): Record<string, unknown> {
  return JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('client_credentials', () => {
  it('answers the documented token with a JWT access token and a refresh token', async () => {
    const res = await grant({ grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const token = tokenResponseSchema.parse(res.json);
    expect(res.json).toMatchObject({ token_type: 'Bearer', expires_in: 10799, scope: 'admin' });
    expect(token.refresh_token).toEqual(expect.any(String));
    const parts = token.access_token.split('.');
    expect(parts).toHaveLength(3);
    for (const part of parts) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodePart(parts[0])).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    const claims = decodePart(parts[1]);
    expect(claims['exp']).toBe(Number(claims['iat']) + 10799);
    expect(claims['cid']).toBe(DEMO_CLIENT.id);
  });

  it('accepts client credentials as form fields', async () => {
    const res = await grant({ grant_type: 'client_credentials', client_id: other.id, client_secret: other.secret }, {});
    expect(res.status).toBe(200);
  });

  it('accepts Basic credentials raw or form-encoded (RFC 6749 2.3.1)', async () => {
    const encoded = basic(encodeURIComponent(other.id), encodeURIComponent(other.secret));
    for (const authorization of [basic(other.id, other.secret), encoded]) {
      expect((await grant({ grant_type: 'client_credentials' }, { authorization })).status).toBe(200);
    }
  });

  it('accepts grant_type in the query string', async () => {
    const res = await grant({}, demoBasic, '?grant_type=client_credentials');
    expect(res.status).toBe(200);
    expect(tokenResponseSchema.safeParse(res.json).success).toBe(true);
  });

  it('echoes a requested scope', async () => {
    const res = await grant({ grant_type: 'client_credentials', scope: 'admin user' });
    expect(res.json).toMatchObject({ scope: 'admin user' });
  });

  it('issues a token usable on the audit report', async () => {
    const token = await clientCredentials();
    expect((await auditRequest(sim, token.access_token, { pageSize: 1 })).status).toBe(200);
  });
});

describe('refresh_token', () => {
  it('refreshes with rotation: a new refresh token each time, the spent one refused', async () => {
    const first = await clientCredentials();
    const refreshed = await grant({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(refreshed.status).toBe(200);
    const second = tokenResponseSchema.parse(refreshed.json);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(refreshed.json).toMatchObject({ scope: 'admin', token_type: 'Bearer' });

    const reused = await grant({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(reused.status).toBe(400);
    expect(tokenErrorSchema.parse(reused.json).error).toBe('invalid_grant');
    const again = await grant({ grant_type: 'refresh_token', refresh_token: second.refresh_token ?? '' });
    expect(again.status).toBe(200);
  });

  it('refuses another client’s refresh token and an unknown one', async () => {
    const mine = await clientCredentials();
    const stolen = await grant(
      { grant_type: 'refresh_token', refresh_token: mine.refresh_token },
      { authorization: basic(other.id, other.secret) },
    );
    expect(stolen.json).toMatchObject({ error: 'invalid_grant' });
    const unknown = await grant({ grant_type: 'refresh_token', refresh_token: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.json).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('refusals', () => {
  it.each([
    [{}, 'invalid_request'],
    [{ grant_type: '' }, 'invalid_request'],
    [{ grant_type: 'refresh_token' }, 'invalid_request'],
    [{ grant_type: 'password', username: 'a', password: 'b' }, 'unsupported_grant_type'],
    [{ grant_type: 'authorization_code', code: 'x' }, 'unsupported_grant_type'],
  ])('answers 400 for %o', async (form, error) => {
    const res = await grant(form as Record<string, string>);
    expect(res.status).toBe(400);
    const body = tokenErrorSchema.parse(res.json);
    expect(body.error).toBe(error);
    expect(body.error_description).toEqual(expect.any(String));
  });

  it.each([
    ['a wrong secret', { authorization: basic(DEMO_CLIENT.id, 'wrong') }, {}],
    ['an unknown client', { authorization: basic('nobody', 'x') }, {}],
    ['no credentials', {}, {}],
    ['a Bearer header', { authorization: 'Bearer abc' }, {}],
    ['garbage Basic', { authorization: 'Basic %%%' }, {}],
    ['wrong form secret', {}, { client_id: DEMO_CLIENT.id, client_secret: 'nope' }],
  ])('answers 401 invalid_client for %s', async (_label, headers, fields) => {
    const res = await grant({ grant_type: 'client_credentials', ...fields }, headers);
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ error: 'invalid_client' });
  });

  it('checks the client before the grant', async () => {
    const res = await grant({ grant_type: 'bogus' }, { authorization: basic('nobody', 'x') });
    expect(res.status).toBe(401);
  });

  it('answers 405 to GET', async () => {
    const res = await fetch(`${sim.url}/SAAS/auth/oauthtoken?grant_type=client_credentials`, {
      headers: demoBasic,
      signal: AbortSignal.timeout(4000),
    });
    expect(res.status).toBe(405);
    await res.body?.cancel();
  });
});

describe('lifetime', () => {
  it('expires an access token at expires_in', async () => {
    const token = await clientCredentials();
    clock.advance(10_798_000);
    expect((await auditRequest(sim, token.access_token, { pageSize: 1 })).status).toBe(200);
    clock.advance(1000);
    expect((await auditRequest(sim, token.access_token, { pageSize: 1 })).status).toBe(401);
    // The refresh token outlives its access token.
    const refreshed = await grant({ grant_type: 'refresh_token', refresh_token: token.refresh_token });
    expect(refreshed.status).toBe(200);
  });

  it('setTokenLifetime changes expires_in of new tokens; 0 is already expired; clearFaults restores it', async () => {
    sim.control.setTokenLifetime(60);
    expect((await clientCredentials()).expires_in).toBe(60);
    sim.control.setTokenLifetime(0);
    const dead = await clientCredentials();
    expect(dead.expires_in).toBe(0);
    expect((await auditRequest(sim, dead.access_token)).status).toBe(401);
    sim.control.clearFaults();
    expect((await clientCredentials()).expires_in).toBe(10799);
  });

  it('honours tokenLifetimeSeconds from the options', async () => {
    const short = await startSimulator({ eventCount: 0, tokenLifetimeSeconds: 5 });
    try {
      const res = await tokenRequest(short, { grant_type: 'client_credentials' }, demoBasic);
      expect(res.json).toMatchObject({ expires_in: 5 });
    } finally {
      await short.close();
    }
  });
});
