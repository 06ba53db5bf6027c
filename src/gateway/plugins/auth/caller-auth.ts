/**
 * Caller authentication for every GraphQL operation, before it is parsed: an API key (`x-api-key`,
 * compared in constant time) or a JWT verified by @graphql-yoga/plugin-jwt with a key from a JWKS
 * (jose's remote key set fetches and caches it).
 */
import { createHash, timingSafeEqual, type KeyObject } from 'node:crypto';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { useJWT } from '@graphql-yoga/plugin-jwt';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors as joseErrors } from 'jose';
import { ANONYMOUS, type Caller, type RequestState } from '../../context.js';
import type { Logger } from '../../../lib/logger.js';
import { currentRequestId } from '../http/request-id.js';

export interface CallerAuthOptions {
  readonly apiKeys: readonly string[];
  readonly allowAnonymous: boolean;
  readonly jwt?:
    | { readonly jwksUrl: string; readonly issuer?: string; readonly audience?: string; readonly requireExp?: boolean }
    | undefined;
  /** A refused JWT is one warn line here (never a stack). */
  readonly log?: Logger | undefined;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Fixed-length digests make the comparison constant-time whatever the key lengths. */
function matchApiKey(keys: readonly Buffer[], given: string): number {
  const candidate = digest(given);
  let match = -1;
  keys.forEach((key, index) => {
    if (timingSafeEqual(key, candidate)) match = index;
  });
  return match;
}

/**
 * The key of an x-api-key header, which Node joins with ", " when it is sent more than once (as
 * proxies may do): one value however often repeated; undefined for different values. A key never
 * holds a comma (GATEWAY_API_KEYS is split on them).
 */
function oneApiKey(header: string): string | undefined {
  const values = new Set(header.split(',').map((value) => value.trim()));
  return values.size === 1 ? [...values][0] : undefined;
}

/** A 401 with the challenge that names both ways in. */
export const unauthenticated = (message: string) =>
  createGraphQLError(message, {
    extensions: {
      code: 'UNAUTHENTICATED',
      http: { status: 401, headers: { 'www-authenticate': 'ApiKey header="x-api-key", Bearer' } },
    },
  });

const JWT_FIELD = 'jwt';

/** The caller the auth plugin admitted for the request of this server (or GraphQL) context. */
export const callerOf = (state: RequestState): Caller => state.caller ?? ANONYMOUS;

/**
 * The token of an `Authorization: Bearer <token>` header, the scheme in any case; '' when empty.
 * Header values arrive trimmed (the Fetch standard strips their leading and trailing whitespace).
 */
export function bearerToken(request: Request): string | undefined {
  const match = request.headers.get('authorization')?.match(/^bearer(?:\s+(.*))?$/i);
  return match ? (match[1] ?? '') : undefined;
}

/** Header and payload of a structurally valid JWT, unverified; undefined for anything else. */
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
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256'] as const;
const isAccepted = (alg: unknown): alg is (typeof ALGORITHMS)[number] => (ALGORITHMS as readonly unknown[]).includes(alg);

/** jose's defaults: refetched when this old, or sooner for an unknown key id but once per cooldown. */
export const JWKS_CACHE = { maxAgeMs: 10 * 60_000, cooldownMs: 30_000 } as const;

/** jose's answer to a token whose key the JWKS (fetched again if the cooldown allows) does not hold. */
const isUnknownKey = (error: unknown) =>
  error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys;

type KeyCallback = (error: Error | null, key?: KeyObject) => void;

export function useCallerAuth(options: CallerAuthOptions): Plugin[] {
  const keys = options.apiKeys.map(digest);
  const plugins: Plugin[] = [];
  if (options.jwt) {
    const jwt = options.jwt;
    const jwks = createRemoteJWKSet(new URL(jwt.jwksUrl), {
      cacheMaxAge: JWKS_CACHE.maxAgeMs,
      cooldownDuration: JWKS_CACHE.cooldownMs,
    });
    // useJWT hands its provider's answer to jsonwebtoken.verify, which also takes a function of the
    // token's header: the key is then chosen by the header's alg and kid, as jose selects it.
    const keyForHeader = (header: { alg?: string; kid?: string }, done: KeyCallback) => {
      jwks(header).then(
        (key) => done(null, key as KeyObject),
        (error: Error) => done(error),
      );
    };
    const refuse = (reason: string, message: string): never => {
      options.log?.warn({ requestId: currentRequestId(), reason }, 'caller JWT refused');
      throw unauthenticated(message);
    };
    plugins.push(
      {
        // useJWT answers 400 or 500 to these, and accepts tokens without expiry; the contract wants 401.
        async onRequestParse({ request }) {
          const token = bearerToken(request);
          if (token === undefined) return;
          if (token === '') refuse('empty bearer token', 'The bearer token is empty.');
          const { header, payload } = decoded(token!) ?? refuse('not a JWT', 'The bearer token is not a JWT.');
          if (jwt.requireExp !== false && typeof payload.exp !== 'number') {
            refuse('no exp claim', 'The token has no expiry (exp).');
          }
          const { alg, kid } = header;
          if (!isAccepted(alg)) {
            return refuse('algorithm not accepted', 'The token is signed with an algorithm the gateway does not accept.');
          }
          // jose would read a kid that is no string as no kid at all.
          if (kid !== undefined && typeof kid !== 'string') {
            return refuse('unknown signing key', 'The token is signed by an unknown key.');
          }
          try {
            // The key useJWT verifies with next, fetched (or refused) here so that a refusal is a 401.
            await jwks({ alg, kid });
          } catch (error) {
            if (isUnknownKey(error)) refuse('unknown signing key', 'The token is signed by an unknown key.');
            // An unreachable or broken JWKS is the gateway's problem, not the caller's.
            throw new Error('The JWKS could not be read.', { cause: error });
          }
        },
      },
      useJWT({
        signingKeyProviders: [() => keyForHeader as unknown as string],
        tokenLookupLocations: [
          ({ request }) => {
            const token = request ? bearerToken(request) : undefined;
            return token ? { token, prefix: 'Bearer' } : undefined;
          },
        ],
        tokenVerification: {
          algorithms: [...ALGORITHMS],
          ...(jwt.issuer ? { issuer: jwt.issuer } : {}),
          ...(jwt.audience ? { audience: jwt.audience } : {}),
        },
        // A missing token may still be an API-key or anonymous caller; a bad one is rejected.
        reject: { missingToken: false, invalidToken: true },
        extendContext: JWT_FIELD,
      }) as Plugin,
    );
  }
  const admitCaller: Plugin<object, RequestState & { [JWT_FIELD]?: { payload?: { sub?: unknown; exp?: unknown } } }> = {
    onRequestParse({ request, serverContext }) {
      const header = request.headers.get('x-api-key');
      if (header !== null && keys.length > 0) {
        const apiKey = oneApiKey(header);
        if (apiKey === undefined) throw unauthenticated('Send one API key: the x-api-key header holds different values.');
        const index = matchApiKey(keys, apiKey);
        if (index < 0) throw unauthenticated('The API key is not valid.');
        serverContext.caller = { id: `api-key:${index}` };
        return;
      }
      // useJWT ran first: it rejected a token that does not verify and kept the payload of one that does.
      const verified = serverContext[JWT_FIELD];
      if (verified?.payload) {
        const { sub: subject, exp } = verified.payload;
        serverContext.caller = {
          id: typeof subject === 'string' ? `jwt:${subject}` : 'jwt',
          ...(typeof exp === 'number' ? { expiresAt: exp * 1000 } : {}),
        };
        return;
      }
      if (!options.allowAnonymous) {
        throw unauthenticated('Authentication required: send an API key in the x-api-key header.');
      }
    },
  };
  plugins.push(admitCaller as Plugin);
  return plugins;
}
