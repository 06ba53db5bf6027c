/**
 * Caller authentication for every GraphQL operation: an API key (`x-api-key`, compared in
 * constant time) or a JWT verified against a JWKS by @graphql-yoga/plugin-jwt. Runs before the
 * request is parsed, so a rejected caller never reaches an upstream. GraphiQL's page, /healthz,
 * /readyz and /metrics are not GraphQL operations and need no key.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { createRemoteJwksSigningKeyProvider, useJWT } from '@graphql-yoga/plugin-jwt';
import { ANONYMOUS, type Caller, type RequestState } from '../context.js';
import type { Logger } from '../logger.js';
import { currentRequestId } from './request-id.js';

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

type DecodedJwt = { header: { kid?: unknown }; payload: { exp?: unknown } };

/** Header and payload of a structurally valid JWT, unverified; undefined for anything else. */
function decodeJwt(token: string): DecodedJwt | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const [header, payload] = parts.slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()) as unknown);
    const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
    return isObject(header) && isObject(payload) ? { header, payload } : undefined;
  } catch {
    // Not base64url-encoded JSON: no JWT either.
  }
  return undefined;
}

/** jwks-rsa's answer to a `kid` its JWKS does not have (or to asking again too often). */
const isUnknownKey = (error: unknown) =>
  error instanceof Error && (error.name === 'SigningKeyNotFoundError' || error.name === 'JwksRateLimitError');

export function useCallerAuth(options: CallerAuthOptions): Plugin[] {
  const keys = options.apiKeys.map(digest);
  // Stryker disable next-line ArrayDeclaration: Yoga skips a plugin without hooks, so a string in the list changes nothing
  const plugins: Plugin[] = [];
  if (options.jwt) {
    const jwt = options.jwt;
    const signingKey = createRemoteJwksSigningKeyProvider({ jwksUri: jwt.jwksUrl, cache: true, rateLimit: true });
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
          const decoded = decodeJwt(token!) ?? refuse('not a JWT', 'The bearer token is not a JWT.');
          if (jwt.requireExp !== false && typeof decoded.payload.exp !== 'number') {
            refuse('no exp claim', 'The token has no expiry (exp).');
          }
          try {
            // The key useJWT asks for next: a kid that is no string names no key, and is refused here too.
            await signingKey(decoded.header.kid as string | undefined);
          } catch (error) {
            // An unreachable JWKS is the gateway's problem, not the caller's: useJWT reports it.
            if (isUnknownKey(error)) refuse('unknown signing key', 'The token is signed by an unknown key.');
          }
        },
      },
      useJWT({
        signingKeyProviders: [signingKey],
        tokenLookupLocations: [
          ({ request }) => {
            const token = request ? bearerToken(request) : undefined;
            return token ? { token, prefix: 'Bearer' } : undefined;
          },
        ],
        tokenVerification: {
          algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256'],
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
      const apiKey = request.headers.get('x-api-key');
      if (apiKey !== null && keys.length > 0) {
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
