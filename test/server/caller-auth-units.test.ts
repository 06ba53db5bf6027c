/**
 * Caller authentication (src/gateway/plugins/auth/caller-auth.ts) in a Yoga of its own, made inside each test
 * (a plugin made while the file is collected would be made before a mutant is active): API keys,
 * the bearer header, the JWT checks made before jose verifies the signature, the algorithms and claims verified, and
 * the caller each request is admitted as, and when the JWKS is fetched. A JWKS on loopback serves
 * two RSA and two EC keys.
 * Through the whole gateway: caller-auth.test.ts.
 */
import { constants, createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RequestState } from '../../src/gateway/context.js';
import type { Logger } from '../../src/lib/logger.js';
import { bearerToken, callerOf, JWKS_CACHE, useCallerAuth, type CallerAuthOptions } from '../../src/gateway/plugins/auth/caller-auth.js';
import { useRequestId } from '../../src/gateway/plugins/http/request-id.js';
import { rsaKeyPair } from '../helpers/rsa-keys.js';

const schema = createSchema({
  typeDefs: 'type Query { caller: String }',
  resolvers: { Query: { caller: (_s: unknown, _a: unknown, context: RequestState) => JSON.stringify(callerOf(context)) } },
});

const rsa = rsaKeyPair('issuer');
const ec256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const stranger = rsaKeyPair('stranger');
/** A second RSA key, as during a rotation: a token without kid does not say which of the two it means. */
const stillPublished = rsaKeyPair('still published');
const jwk = (key: KeyObject, kid: string) => ({ ...(key.export({ format: 'jwk' }) as object), kid, use: 'sig' });

let jwksFetches = 0;
let server: Server;
let jwksUrl = '';
beforeAll(async () => {
  server = createServer((_req, res) => {
    jwksFetches++;
    res.setHeader('content-type', 'application/json');
    const keys = [jwk(rsa.publicKey, 'rsa'), jwk(stillPublished.publicKey, 'rsa-previous'), jwk(ec256.publicKey, 'ec256'), jwk(ec384.publicKey, 'ec384')];
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

type Alg = 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'ES256' | 'ES384';
const signers: Record<Alg, { kid: string; sign: (data: Buffer) => Buffer }> = {
  RS256: { kid: 'rsa', sign: (d) => sign('sha256', d, rsa.privateKey) },
  RS384: { kid: 'rsa', sign: (d) => sign('sha384', d, rsa.privateKey) },
  RS512: { kid: 'rsa', sign: (d) => sign('sha512', d, rsa.privateKey) },
  PS256: {
    kid: 'rsa',
    sign: (d) =>
      sign('sha256', d, { key: rsa.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }),
  },
  ES256: { kid: 'ec256', sign: (d) => sign('sha256', d, { key: ec256.privateKey, dsaEncoding: 'ieee-p1363' }) },
  ES384: { kid: 'ec384', sign: (d) => sign('sha384', d, { key: ec384.privateKey, dsaEncoding: 'ieee-p1363' }) },
};

/** A JWT signed by the JWKS's RSA key (RS256) unless told otherwise; `undefined` claims are left out. */
function token(claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}, alg: Alg = 'RS256') {
  const body = `${b64({ alg, typ: 'JWT', kid: signers[alg].kid, ...header })}.${b64({ sub: 'alice', iat: now(), exp: now() + 300, ...claims })}`;
  return `${body}.${signers[alg].sign(Buffer.from(body)).toString('base64url')}`;
}

interface Answer {
  status: number;
  challenge: string | null;
  caller?: Record<string, unknown>;
  errors?: { message: string; extensions?: { code?: string } }[];
}

const yogaFor = (options: CallerAuthOptions, extra: Plugin[] = []) =>
  createYoga({ schema, logging: false, plugins: [...extra, useCallerAuth(options)] });

async function askYoga(yoga: ReturnType<typeof yogaFor>, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: '{ caller }' }),
  });
  const body = (await response.json()) as { data?: { caller: string }; errors?: Answer['errors'] };
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    ...(body.data?.caller ? { caller: JSON.parse(body.data.caller) as Record<string, unknown> } : {}),
    ...(body.errors ? { errors: body.errors } : {}),
  };
}
const ask = (options: CallerAuthOptions, headers: Record<string, string> = {}) => askYoga(yogaFor(options), headers);
const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

const CHALLENGE = 'ApiKey header="x-api-key", Bearer';
const refused = (message: string): Answer => ({
  status: 401,
  challenge: CHALLENGE,
  errors: [{ message, extensions: { code: 'UNAUTHENTICATED' } }],
});
const admitted = (caller: Record<string, unknown>): Answer => ({ status: 200, challenge: null, caller });

describe('API keys', () => {
  const keys: CallerAuthOptions = { apiKeys: ['key-alpha', 'key-beta'], allowAnonymous: false };

  it('admits each key as the caller of its position in the list', async () => {
    expect(await ask(keys, { 'x-api-key': 'key-alpha' })).toEqual(admitted({ id: 'api-key:0' }));
    expect(await ask(keys, { 'x-api-key': 'key-beta' })).toEqual(admitted({ id: 'api-key:1' }));
  });

  it.each([['key-alph'], ['key-alpha-and-more'], ['KEY-ALPHA'], ['']])('refuses the key %j with 401 and a challenge', async (key) => {
    expect(await ask(keys, { 'x-api-key': key })).toEqual(refused('The API key is not valid.'));
  });

  it('admits a key sent more than once, as the key', async () => {
    for (const sent of [['key-beta', 'key-beta'], ['key-beta', 'key-beta', 'key-beta']]) {
      const headers = new Headers();
      for (const value of sent) headers.append('x-api-key', value);
      expect(await ask(keys, Object.fromEntries(headers))).toEqual(admitted({ id: 'api-key:1' }));
    }
    expect(await ask(keys, { 'x-api-key': 'key-alpha,key-alpha' })).toEqual(admitted({ id: 'api-key:0' }));
  });

  it.each([
    ['two valid keys', 'key-alpha, key-beta'],
    ['a valid key and a wrong one', 'key-alpha, nope'],
    ['a valid key and an empty one', 'key-alpha, '],
  ])('refuses %s in one request with 401: one key only', async (_case, header) => {
    expect(await ask({ ...keys, allowAnonymous: true }, { 'x-api-key': header })).toEqual(
      refused('Send one API key: the x-api-key header holds different values.'),
    );
  });

  it('refuses a wrong key even when anonymous callers are let in', async () => {
    expect(await ask({ ...keys, allowAnonymous: true }, { 'x-api-key': 'nope' })).toEqual(refused('The API key is not valid.'));
  });

  it('refuses a caller with no credential unless anonymous callers are let in', async () => {
    expect(await ask(keys)).toEqual(refused('Authentication required: send an API key in the x-api-key header.'));
    expect(await ask({ ...keys, allowAnonymous: true })).toEqual(admitted({ id: 'anonymous' }));
  });

  it('ignores an x-api-key header when no keys are configured', async () => {
    expect(await ask({ apiKeys: [], allowAnonymous: true }, { 'x-api-key': 'anything' })).toEqual(admitted({ id: 'anonymous' }));
    expect(await ask({ apiKeys: [], allowAnonymous: false }, { 'x-api-key': 'anything' })).toEqual(
      refused('Authentication required: send an API key in the x-api-key header.'),
    );
  });

  it('callerOf reads anonymous from a context no plugin admitted', () => {
    expect(callerOf({})).toEqual({ id: 'anonymous' });
    expect(callerOf({ caller: { id: 'api-key:3' } })).toEqual({ id: 'api-key:3' });
  });
});

describe('bearerToken', () => {
  const read = (authorization?: string) =>
    bearerToken(new Request('http://yoga.test/', authorization === undefined ? {} : { headers: { authorization } }));

  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['Bearer    abc   ', 'abc'],
    ['Bearer\tabc', 'abc'],
    ['Bearer a b', 'a b'],
    ['Bearer', ''],
    ['Bearer   ', ''],
  ])('reads %j as %j', (header, expected) => {
    expect(read(header)).toBe(expected);
  });

  it.each([[undefined], [''], ['Basic abc'], ['Bearerabc'], ['Token Bearer abc'], ['xBearer abc']])('reads no bearer token in %j', (header) => {
    expect(read(header)).toBeUndefined();
  });
});

describe('JWT callers', () => {
  const jwtOnly = (jwt: Partial<NonNullable<CallerAuthOptions['jwt']>> = {}, allowAnonymous = false): CallerAuthOptions => ({
    apiKeys: [],
    allowAnonymous,
    jwt: { jwksUrl, ...jwt },
  });

  it('admits a verified token as its subject, until its expiry', async () => {
    const exp = now() + 120;
    expect(await ask(jwtOnly(), bearer(token({ sub: 'alice', exp })))).toEqual(admitted({ id: 'jwt:alice', expiresAt: exp * 1000 }));
  });

  it('admits a token without a string subject as `jwt`', async () => {
    const exp = now() + 120;
    expect(await ask(jwtOnly(), bearer(token({ sub: undefined, exp })))).toEqual(admitted({ id: 'jwt', expiresAt: exp * 1000 }));
    expect(await ask(jwtOnly(), bearer(token({ sub: 42, exp })))).toEqual(admitted({ id: 'jwt', expiresAt: exp * 1000 }));
  });

  it.each([['RS384'], ['RS512'], ['PS256'], ['ES256'], ['ES384']] as const)('admits a token signed with %s', async (alg) => {
    const exp = now() + 60;
    expect(await ask(jwtOnly(), bearer(token({ exp }, {}, alg)))).toEqual(admitted({ id: 'jwt:alice', expiresAt: exp * 1000 }));
  });

  it('refuses a token signed with HS256 whatever its secret (here the public key, the classic confusion)', async () => {
    const secret = rsa.publicKey.export({ format: 'pem', type: 'spki' });
    const body = `${b64({ alg: 'HS256', typ: 'JWT', kid: 'rsa' })}.${b64({ sub: 'mallory', exp: now() + 60 })}`;
    const forged = `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
    const answer = await ask(jwtOnly({}, true), bearer(forged));
    expect(answer.status).toBe(401);
    expect(answer.caller).toBeUndefined();
  });

  it('refuses a token signed by a key the JWKS does not hold, also where anonymous callers are let in', async () => {
    const body = `${b64({ alg: 'RS256', typ: 'JWT', kid: 'rsa' })}.${b64({ sub: 'mallory', exp: now() + 60 })}`;
    const forged = `${body}.${sign('sha256', Buffer.from(body), stranger.privateKey).toString('base64url')}`;
    for (const anonymous of [false, true]) {
      const answer = await ask(jwtOnly({}, anonymous), bearer(forged));
      expect(answer.status).toBe(401);
      expect(answer.caller).toBeUndefined();
    }
  });

  it('refuses an expired token', async () => {
    const answer = await ask(jwtOnly(), bearer(token({ exp: now() - 60 })));
    expect(answer.status).toBe(401);
    expect(answer.caller).toBeUndefined();
  });

  it('checks the issuer and the audience when they are configured', async () => {
    const checked = jwtOnly({ issuer: 'https://issuer.test', audience: 'gateway' });
    expect((await ask(checked, bearer(token({ iss: 'https://issuer.test', aud: 'gateway' })))).caller).toMatchObject({ id: 'jwt:alice' });
    for (const claims of [{ iss: 'https://other.test', aud: 'gateway' }, { iss: 'https://issuer.test', aud: 'other' }, {}]) {
      const answer = await ask(checked, bearer(token(claims)));
      expect(answer.status).toBe(401);
      expect(answer.caller).toBeUndefined();
    }
    // Not configured: any issuer and audience.
    expect((await ask(jwtOnly(), bearer(token({ iss: 'https://other.test', aud: 'other' })))).caller).toMatchObject({ id: 'jwt:alice' });
  });

  it('refuses a token without a numeric expiry unless expiry is optional', async () => {
    for (const exp of [undefined, '9999999999']) {
      expect(await ask(jwtOnly(), bearer(token({ exp })))).toEqual(refused('The token has no expiry (exp).'));
      expect(await ask(jwtOnly({ requireExp: true }), bearer(token({ exp })))).toEqual(refused('The token has no expiry (exp).'));
    }
    expect(await ask(jwtOnly({ requireExp: false }), bearer(token({ exp: undefined })))).toEqual(admitted({ id: 'jwt:alice' }));
  });

  it('refuses an empty bearer token', async () => {
    expect(await ask(jwtOnly({}, true), { authorization: 'Bearer' })).toEqual(refused('The bearer token is empty.'));
    expect(await ask(jwtOnly({}, true), { authorization: 'bearer   ' })).toEqual(refused('The bearer token is empty.'));
  });

  it.each([
    ['one part', 'abc'],
    ['two parts', `${b64({ alg: 'RS256' })}.${b64({ sub: 'a' })}`],
    ['four parts', `${token()}.x`],
    ['a header that is not JSON', `${Buffer.from('{nope').toString('base64url')}.${b64({ sub: 'a' })}.c2ln`],
    ['a payload that is not JSON', `${b64({ alg: 'RS256' })}.${Buffer.from('nope}').toString('base64url')}.c2ln`],
    ['a header that is an array', `${b64(['RS256'])}.${b64({ sub: 'a' })}.c2ln`],
    ['a payload that is null', `${b64({ alg: 'RS256' })}.${b64(null)}.c2ln`],
    ['a payload that is a number', `${b64({ alg: 'RS256' })}.${b64(7)}.c2ln`],
    ['a header that is a string', `${b64('RS256')}.${b64({ sub: 'a' })}.c2ln`],
  ])('refuses a bearer value with %s as not a JWT, with 401', async (_case, value) => {
    expect(await ask(jwtOnly({}, true), bearer(value))).toEqual(refused('The bearer token is not a JWT.'));
  });

  it.each([
    ['a kid the JWKS does not have', { kid: 'retired' }],
    ['a kid that is a number', { kid: 7 }],
    ['no kid, where the JWKS holds several keys of its type', { kid: undefined }],
  ])('refuses a token with %s as signed by an unknown key', async (_case, header) => {
    expect(await ask(jwtOnly(), bearer(token({}, header)))).toEqual(refused('The token is signed by an unknown key.'));
  });

  it('admits a token without kid, where the JWKS holds one key of its type', async () => {
    const exp = now() + 60;
    expect(await ask(jwtOnly(), bearer(token({ exp }, { kid: undefined }, 'ES384')))).toEqual(admitted({ id: 'jwt:alice', expiresAt: exp * 1000 }));
  });

  it.each([
    ['none', `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'mallory', exp: now() + 60 })}.`],
    ['no alg', `${b64({ typ: 'JWT', kid: 'rsa' })}.${b64({ sub: 'mallory', exp: now() + 60 })}.c2ln`],
  ])('refuses a token with alg %s, also where anonymous callers are let in', async (_case, value) => {
    expect(await ask(jwtOnly({}, true), bearer(value))).toEqual(
      refused('The token is signed with an algorithm the gateway does not accept.'),
    );
  });

  it('asks the JWKS once for many tokens signed by a key it holds', async () => {
    const yoga = yogaFor(jwtOnly());
    const before = jwksFetches;
    for (let i = 0; i < 3; i++) expect((await askYoga(yoga, bearer(token()))).caller).toMatchObject({ id: 'jwt:alice' });
    expect(jwksFetches - before).toBe(1);
  });

  it('asks the JWKS again at most once per cooldown for keys it does not hold, however many arrive at once', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    try {
      const yoga = yogaFor(jwtOnly());
      const before = jwksFetches;
      const unknownKeys = () =>
        Promise.all(Array.from({ length: 30 }, (_, i) => askYoga(yoga, bearer(token({}, { kid: `unknown-${i}` })))));
      expect((await askYoga(yoga, bearer(token()))).caller).toMatchObject({ id: 'jwt:alice' });
      for (const answer of await unknownKeys()) expect(answer).toEqual(refused('The token is signed by an unknown key.'));
      expect(jwksFetches - before).toBe(1);
      vi.setSystemTime(Date.now() + JWKS_CACHE.cooldownMs);
      for (const answer of await unknownKeys()) expect(answer).toEqual(refused('The token is signed by an unknown key.'));
      expect(jwksFetches - before).toBe(2);
      expect((await askYoga(yoga, bearer(token()))).caller).toMatchObject({ id: 'jwt:alice' });
      expect(jwksFetches - before).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('asks the JWKS again once its copy is older than its maximum age, once, among unknown keys too', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    try {
      const yoga = yogaFor(jwtOnly());
      const before = jwksFetches;
      expect((await askYoga(yoga, bearer(token()))).caller).toMatchObject({ id: 'jwt:alice' });
      vi.setSystemTime(Date.now() + JWKS_CACHE.maxAgeMs);
      const unknownKey = (i: number) => askYoga(yoga, bearer(token({}, { kid: `aged-${i}` })));
      const [first, known, second] = await Promise.all([unknownKey(1), askYoga(yoga, bearer(token())), unknownKey(2)]);
      expect(known.caller).toMatchObject({ id: 'jwt:alice' });
      expect([first, second]).toEqual([refused('The token is signed by an unknown key.'), refused('The token is signed by an unknown key.')]);
      expect(jwksFetches - before).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not blame the caller for a JWKS that cannot be reached', async () => {
    const answer = await ask({ apiKeys: [], allowAnonymous: false, jwt: { jwksUrl: 'http://127.0.0.1:1/jwks' } }, bearer(token()));
    expect(answer.status).toBe(500);
    expect(answer.challenge).toBeNull();
    expect(answer.caller).toBeUndefined();
  });

  it('lets API-key and anonymous callers in beside JWT callers, the key first', async () => {
    const both: CallerAuthOptions = { apiKeys: ['key-alpha'], allowAnonymous: true, jwt: { jwksUrl } };
    expect(await ask(both, { 'x-api-key': 'key-alpha' })).toEqual(admitted({ id: 'api-key:0' }));
    expect(await ask(both)).toEqual(admitted({ id: 'anonymous' }));
    expect((await ask(both, { 'x-api-key': 'key-alpha', ...bearer(token()) })).caller).toEqual({ id: 'api-key:0' });
    expect(await ask({ ...both, allowAnonymous: false })).toEqual(
      refused('Authentication required: send an API key in the x-api-key header.'),
    );
  });

  it('reads a token beside an x-api-key header when no keys are configured', async () => {
    expect((await ask(jwtOnly(), { 'x-api-key': 'stray', ...bearer(token()) })).caller).toMatchObject({ id: 'jwt:alice' });
  });

  it('logs each refusal before the signature check once, at warn, with its reason and request id', async () => {
    const lines: { fields: unknown; message: unknown }[] = [];
    const log = { warn: (fields: unknown, message: unknown) => lines.push({ fields, message }) } as unknown as Logger;
    const yoga = yogaFor({ ...jwtOnly(), log }, [useRequestId()]);
    const cases: [string, string][] = [
      ['', 'empty bearer token'],
      ['abc', 'not a JWT'],
      [token({ exp: undefined }), 'no exp claim'],
      [token({}, { kid: 'retired' }), 'unknown signing key'],
      [`${b64({ alg: 'HS256' })}.${b64({ exp: now() + 60 })}.c2ln`, 'algorithm not accepted'],
    ];
    for (const [value, reason] of cases) {
      lines.length = 0;
      expect((await askYoga(yoga, { ...bearer(value), 'x-request-id': `req-${reason.length}` })).status).toBe(401);
      expect(lines).toEqual([{ fields: { requestId: `req-${reason.length}`, reason }, message: 'caller JWT refused' }]);
    }
    lines.length = 0;
    await askYoga(yoga, bearer(token()));
    expect(lines).toEqual([]);
  });
});
