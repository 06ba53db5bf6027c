import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { JWKS_CACHE } from '../../src/gateway/plugins/auth/caller-auth.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { TestIssuer } from '../helpers/jwt-issuer.js';
import { listen } from '../helpers/listen.js';
import { rsaKeyPair } from '../helpers/rsa-keys.js';
import { parse, RawClient } from '../helpers/raw-http.js';

const QUERY = '{ auditEvents(first: 1) { edges { cursor } } }';
const TOKEN_NOT_VERIFIED = 'The bearer token does not verify: its signature, issuer, audience or expiry is not accepted.';
const upstreamCalls = (gateway: TestGateway) => {
  const c = gateway.sim.control.counters();
  return c.token + c.audit + c.session + c.files;
};

describe('API keys', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ env: { GATEWAY_API_KEYS: 'key-alpha, key-beta', GATEWAY_ALLOW_ANONYMOUS: 'false' } });
  });
  afterAll(() => gateway.close());

  it.each([
    ['no key', {}],
    ['a wrong key', { 'x-api-key': 'key-alph' }],
    ['a longer wrong key', { 'x-api-key': 'key-alpha-and-more' }],
  ])('answers 401 UNAUTHENTICATED to %s, and nothing reaches an upstream', async (_case, headers) => {
    gateway.sim.control.resetCounters();
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(response.status).toBe(401);
    const body = (await response.json()) as any;
    expect(body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(body.data ?? null).toBeNull();
    expect(upstreamCalls(gateway)).toBe(0);
  });

  it('rejects an unauthenticated caller before parsing: even a broken document gets 401', async () => {
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ not graphql' }),
    });
    expect(response.status).toBe(401);
  });

  it('serves every valid key', async () => {
    for (const key of ['key-alpha', 'key-beta']) {
      const result = await gateway.execute(QUERY, undefined, { 'x-api-key': key });
      expect(result.errors).toBeUndefined();
      expect(result.data.auditEvents.edges).toHaveLength(1);
    }
  });

  it('reads an x-api-key header sent twice as one key if the values are the same, and refuses different ones', async () => {
    const server = await listen(gateway.yoga);
    try {
      const port = Number(new URL(server.url).port);
      const body = JSON.stringify({ query: '{ __typename }' });
      const sent = (...keys: string[]) =>
        new RawClient(
          port,
          `POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nconnection: close\r\n` +
            keys.map((key) => `x-api-key: ${key}\r\n`).join('') +
            `content-length: ${body.length}\r\n\r\n${body}`,
        ).answer();
      const twice = parse(await sent('key-alpha', 'key-alpha'));
      expect(twice.statusLine).toBe('HTTP/1.1 200 OK');
      expect(twice.body).toEqual({ data: { __typename: 'Query' } });
      const different = parse(await sent('key-alpha', 'key-beta'));
      expect(different.statusLine).toBe('HTTP/1.1 401 Unauthorized');
      expect(different.body).toEqual({
        errors: [{ message: 'Send one API key: the x-api-key header holds different values.', extensions: { code: 'UNAUTHENTICATED' } }],
      });
    } finally {
      await server.close();
    }
  });

  it('needs no key for the GraphiQL page, health, readiness and metrics', async () => {
    const page = await gateway.fetch('/graphql', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/graphiql/i);
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      expect((await gateway.fetch(path)).status).toBe(200);
    }
  });
});

describe('JWT callers (JWKS)', () => {
  const issuer = new TestIssuer();
  let gateway: TestGateway;
  beforeAll(async () => {
    await issuer.start();
    gateway = await startTestGateway({
      env: {
        GATEWAY_ALLOW_ANONYMOUS: 'false',
        GATEWAY_JWT_JWKS_URL: issuer.url,
        GATEWAY_JWT_ISSUER: 'https://issuer.test',
        GATEWAY_JWT_AUDIENCE: 'gateway',
      },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await issuer.close();
  });

  const withToken = (token: string) => gateway.execute(QUERY, undefined, { authorization: `Bearer ${token}` });

  it('admits a token signed by the JWKS key with the right issuer and audience', async () => {
    const result = await withToken(issuer.token({ sub: 'user-1', iss: 'https://issuer.test', aud: 'gateway' }));
    expect(result.errors).toBeUndefined();
    expect(result.data.auditEvents.edges).toHaveLength(1);
  });

  it.each([
    ['another audience', { sub: 'u', iss: 'https://issuer.test', aud: 'someone-else' }],
    ['another issuer', { sub: 'u', iss: 'https://evil.test', aud: 'gateway' }],
    ['an expired token', { sub: 'u', iss: 'https://issuer.test', aud: 'gateway', exp: Math.floor(Date.now() / 1000) - 60 }],
  ])('rejects %s with 401 UNAUTHENTICATED', async (_case, claims) => {
    gateway.sim.control.resetCounters();
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${issuer.token(claims)}` },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('ApiKey header="x-api-key", Bearer');
    expect(await response.json()).toEqual({ errors: [{ message: TOKEN_NOT_VERIFIED, extensions: { code: 'UNAUTHENTICATED' } }] });
    expect(upstreamCalls(gateway)).toBe(0);
  });

  it('rejects a token signed by another key', async () => {
    const stranger = rsaKeyPair('stranger').privateKey;
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${issuer.token({ sub: 'u', iss: 'https://issuer.test', aud: 'gateway' }, stranger)}`,
      },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('ApiKey header="x-api-key", Bearer');
    expect(await response.json()).toEqual({ errors: [{ message: TOKEN_NOT_VERIFIED, extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('rejects a bearer value that is not a JWT with 401, not 400', async () => {
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-jwt' },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as any).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  const good = { sub: 'u', iss: 'https://issuer.test', aud: 'gateway' };
  const send = (authorization: string) =>
    gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ query: QUERY }),
    });

  it('reads the scheme in any case: `bearer <token>` works', async () => {
    for (const scheme of ['bearer', 'BEARER']) {
      const response = await send(`${scheme} ${issuer.token(good)}`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as any).data.auditEvents.edges).toHaveLength(1);
    }
  });

  it.each([
    ['an unknown kid', () => `Bearer ${issuer.token(good, undefined, { kid: 'rotated-away' })}`],
    ['an empty bearer', () => 'Bearer '],
    ['a bare scheme', () => 'Bearer'],
    ['a token without exp', () => `Bearer ${issuer.token({ ...good, exp: undefined })}`],
  ])('answers %s with 401 UNAUTHENTICATED and one warn line without a stack', async (_case, authorization) => {
    gateway.sim.control.resetCounters();
    const before = gateway.logs().length;
    const response = await send(authorization());
    expect(response.status).toBe(401);
    expect(((await response.json()) as any).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(upstreamCalls(gateway)).toBe(0);
    const written = gateway.logs().slice(before);
    expect(written.filter((l) => (l.level as number) >= 40)).toHaveLength(1);
    expect(written.filter((l) => (l.level as number) >= 50)).toHaveLength(0);
    expect(JSON.stringify(written)).not.toMatch(/"stack"|\n\s+at /);
  });

  it('logs a token that fails verification once, at warn, without a stack', async () => {
    const before = gateway.logs().length;
    const response = await send(`Bearer ${issuer.token({ ...good, aud: 'someone-else' })}`);
    expect(response.status).toBe(401);
    const written = gateway.logs().slice(before);
    expect(written.filter((l) => (l.level as number) >= 40)).toHaveLength(1);
    expect(JSON.stringify(written)).not.toMatch(/"stack"|\n\s+at /);
  });

  it('rejects a caller with no token', async () => {
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(response.status).toBe(401);
  });
});

describe('JWT callers while tokens with junk key ids flood in', () => {
  const issuer = new TestIssuer();
  let gateway: TestGateway;
  beforeAll(async () => {
    await issuer.start();
    gateway = await startTestGateway({ env: { GATEWAY_ALLOW_ANONYMOUS: 'false', GATEWAY_JWT_JWKS_URL: issuer.url } });
  });
  afterAll(async () => {
    await gateway.close();
    await issuer.close();
  });
  // The clock jose's cooldown reads is moved by hand: no test waits for it.
  afterEach(() => vi.useRealTimers());

  const status = async (token: string) => {
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const body = (await response.json()) as any;
    return { status: response.status, message: body.errors?.[0]?.message as string | undefined };
  };
  const flood = (count: number) =>
    Promise.all(Array.from({ length: count }, () => status(issuer.token({ sub: 'mallory' }, undefined, { kid: randomUUID() }))));
  const later = (ms: number) => vi.setSystemTime(Date.now() + ms);

  it('refetches the JWKS at most once per cooldown, keeps admitting cached keys, and accepts a newly published key', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const cached = () => status(issuer.token({ sub: 'alice' }));
    expect(await cached()).toEqual({ status: 200, message: undefined });
    const fetched = issuer.fetches;
    const before = gateway.logs().length;

    for (const answer of await flood(30)) expect(answer).toEqual({ status: 401, message: 'The token is signed by an unknown key.' });
    expect(await cached()).toEqual({ status: 200, message: undefined });
    expect(issuer.fetches).toBe(fetched);

    later(JWKS_CACHE.cooldownMs);
    const [junk, ofCachedKey] = await Promise.all([flood(30), cached()]);
    expect(junk.every((answer) => answer.status === 401)).toBe(true);
    expect(ofCachedKey.status).toBe(200);
    expect(issuer.fetches).toBe(fetched + 1);

    // Published after the last fetch: unknown until the cooldown allows the next one, whatever the flood.
    const rotated = issuer.publishKey('rotated-in');
    const ofNewKey = () => status(issuer.token({ sub: 'bob' }, rotated, { kid: 'rotated-in' }));
    expect((await ofNewKey()).status).toBe(401);
    await flood(30);
    later(JWKS_CACHE.cooldownMs);
    const [, accepted] = await Promise.all([flood(30), ofNewKey(), flood(30)]);
    expect(accepted).toEqual({ status: 200, message: undefined });
    expect(issuer.fetches).toBe(fetched + 2);

    const written = gateway.logs().slice(before);
    expect(written.filter((l) => (l.level as number) >= 50)).toEqual([]);
  });
});
