/** Callers authenticated before parsing: an API key compared in constant time, or a JWT jose verifies by a cached JWKS. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { ANONYMOUS, type Caller, type RequestState } from '../../context.js';
import type { Logger } from '../../../lib/logger.js';
import { refusal } from '../compat/coded-refusals.js';
import { currentRequestId } from '../http/request-id.js';

export interface CallerAuthOptions {
  readonly apiKeys: readonly string[];
  readonly allowAnonymous: boolean;
  readonly jwt?: { jwksUrl: string; issuer?: string; audience?: string; requireExp?: boolean } | undefined;
  /** A refused JWT is one warn line here (never a stack). */
  readonly log?: Logger | undefined;
}

export const digest = (value: string) => createHash('sha256').update(value).digest();

/** Fixed-length digests make the comparison constant-time whatever the key lengths. */
function matchApiKey(keys: readonly Buffer[], given: string): number {
  const candidate = digest(given);
  return keys.reduce((match, key, index) => (timingSafeEqual(key, candidate) ? index : match), -1);
}

/** Node joins a repeated x-api-key with ", ": one key however often repeated, undefined for different ones (keys hold no comma). */
function oneApiKey(header: string): string | undefined {
  const values = new Set(header.split(',').map((value) => value.trim()));
  return values.size === 1 ? [...values][0] : undefined;
}

export const unauthenticated = (message: string) =>
  refusal(message, 401, 'UNAUTHENTICATED', { 'www-authenticate': 'ApiKey header="x-api-key", Bearer' });

export const callerOf = (state: RequestState): Caller => state.caller ?? ANONYMOUS;

/** The token of an `Authorization: Bearer <token>` header (values arrive trimmed), the scheme in any case; '' when empty. */
export function bearerToken(request: Request): string | undefined {
  const match = request.headers.get('authorization')?.match(/^bearer(?:\s+(.*))?$/i);
  return match ? (match[1] ?? '') : undefined;
}

function decoded(token: string) {
  try {
    // Typed as strings, but a header's alg or kid may be anything.
    const header = decodeProtectedHeader(token) as { alg?: unknown; kid?: unknown };
    return { header, payload: decodeJwt(token) as { exp?: unknown } };
  } catch {
    return undefined;
  }
}

/** Signature algorithms a caller JWT may use: asymmetric only, so a public key never serves as a secret. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256'];

/** jose's defaults: refetched when this old, or sooner for an unknown key id but once per cooldown. */
export const JWKS_CACHE = { maxAgeMs: 10 * 60_000, cooldownMs: 30_000 } as const;

const UNKNOWN_KEY = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS']);
/** jose's refusals of the token itself; any other failure is the JWKS's, so the gateway's. */
const NOT_VERIFIED = new Set(['ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'ERR_JWT_EXPIRED', 'ERR_JWS_INVALID', 'ERR_JWT_INVALID']);
const TOKEN_NOT_VERIFIED = 'The bearer token does not verify: its signature, issuer, audience or expiry is not accepted.';

function jwtVerifier(jwt: NonNullable<CallerAuthOptions['jwt']>, log: Logger | undefined) {
  const jwks = createRemoteJWKSet(new URL(jwt.jwksUrl), { cacheMaxAge: JWKS_CACHE.maxAgeMs, cooldownDuration: JWKS_CACHE.cooldownMs });
  const refuse = (reason: string, message: string): never => {
    log?.warn({ requestId: currentRequestId(), reason }, 'caller JWT refused');
    throw unauthenticated(message);
  };
  const options = { algorithms: ALGORITHMS, issuer: jwt.issuer, audience: jwt.audience };
  return async (token: string): Promise<JWTPayload> => {
    if (token === '') refuse('empty bearer token', 'The bearer token is empty.');
    const { header, payload } = decoded(token) ?? refuse('not a JWT', 'The bearer token is not a JWT.');
    if (jwt.requireExp !== false && typeof payload.exp !== 'number') refuse('no exp claim', 'The token has no expiry (exp).');
    if (!ALGORITHMS.includes(header.alg as string)) {
      refuse('algorithm not accepted', 'The token is signed with an algorithm the gateway does not accept.');
    }
    // jose would read a kid that is no string as no kid at all.
    if (header.kid !== undefined && typeof header.kid !== 'string') refuse('unknown signing key', 'The token is signed by an unknown key.');
    try {
      return (await jwtVerify(token, jwks, options)).payload;
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (UNKNOWN_KEY.has(code)) refuse('unknown signing key', 'The token is signed by an unknown key.');
      if (NOT_VERIFIED.has(code)) refuse(`does not verify: ${(error as Error).message}`, TOKEN_NOT_VERIFIED);
      // An unreachable or broken JWKS is the gateway's problem, not the caller's.
      throw new Error('The JWKS could not be read.', { cause: error });
    }
  };
}

export function useCallerAuth(options: CallerAuthOptions): Plugin<object, RequestState> {
  const keys = options.apiKeys.map(digest);
  // A presented key's verdict (the key's index, or -1) is remembered, so a caller's key is hashed once.
  const verdicts = new LRUCache<string, number>({ max: 64 });
  const verify = options.jwt && jwtVerifier(options.jwt, options.log);
  const admit = (request: Request, state: RequestState, payload: JWTPayload | undefined) => {
    const header = request.headers.get('x-api-key');
    if (header !== null && keys.length > 0) {
      const apiKey = oneApiKey(header);
      if (apiKey === undefined) throw unauthenticated('Send one API key: the x-api-key header holds different values.');
      let index = verdicts.get(apiKey);
      if (index === undefined) verdicts.set(apiKey, (index = matchApiKey(keys, apiKey)));
      if (index < 0) throw unauthenticated('The API key is not valid.');
      state.caller = { id: `api-key:${index}` };
    } else if (payload) {
      const { sub: subject, exp } = payload;
      state.caller = { id: typeof subject === 'string' ? `jwt:${subject}` : 'jwt', ...(typeof exp === 'number' ? { expiresAt: exp * 1000 } : {}) };
    } else if (!options.allowAnonymous) {
      throw unauthenticated('Authentication required: send an API key in the x-api-key header.');
    }
  };
  return {
    onRequestParse({ request, serverContext }) {
      const token = verify && bearerToken(request);
      if (token === undefined) return admit(request, serverContext, undefined);
      // A token that does not verify is refused, even beside a valid API key.
      return verify!(token).then((payload) => admit(request, serverContext, payload));
    },
  };
}
