/**
 * Caller authentication for every GraphQL operation: an API key (`x-api-key`, compared in
 * constant time) or a JWT verified against a JWKS by @graphql-yoga/plugin-jwt. Runs before the
 * request is parsed, so a rejected caller never reaches an upstream. GraphiQL's page, /healthz,
 * /readyz and /metrics are not GraphQL operations and need no key.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import {
  createRemoteJwksSigningKeyProvider,
  extractFromHeader,
  useJWT,
} from '@graphql-yoga/plugin-jwt';
import type { Caller } from '../context.js';

export interface CallerAuthOptions {
  readonly apiKeys: readonly string[];
  readonly allowAnonymous: boolean;
  readonly jwt?: { readonly jwksUrl: string; readonly issuer?: string; readonly audience?: string } | undefined;
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

const unauthenticated = (message: string) =>
  createGraphQLError(message, {
    extensions: {
      code: 'UNAUTHENTICATED',
      http: { status: 401, headers: { 'www-authenticate': 'ApiKey header="x-api-key", Bearer' } },
    },
  });

const callers = new WeakMap<Request, Caller>();
const JWT_FIELD = 'jwt';

/** The caller the auth plugin admitted for this request. */
export const callerOf = (request: Request): Caller => callers.get(request) ?? { id: 'anonymous' };

/** Structurally a JWT: useJWT answers 400 to anything else, where the contract wants 401. */
const looksLikeJwt = (token: string) => {
  const [header] = token.split('.');
  try {
    return token.split('.').length === 3 && typeof JSON.parse(Buffer.from(header!, 'base64url').toString()) === 'object';
  } catch {
    return false;
  }
};

export function useCallerAuth(options: CallerAuthOptions): Plugin[] {
  const keys = options.apiKeys.map(digest);
  const plugins: Plugin[] = [];
  if (options.jwt) {
    plugins.push(
      {
        onRequestParse({ request }) {
          const bearer = /^bearer\s+(.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
          if (bearer !== undefined && !looksLikeJwt(bearer)) throw unauthenticated('The bearer token is not a JWT.');
        },
      },
      useJWT({
        signingKeyProviders: [
          createRemoteJwksSigningKeyProvider({ jwksUri: options.jwt.jwksUrl, cache: true, rateLimit: true }),
        ],
        tokenLookupLocations: [extractFromHeader({ name: 'authorization', prefix: 'Bearer' })],
        tokenVerification: {
          algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256'],
          ...(options.jwt.issuer ? { issuer: options.jwt.issuer } : {}),
          ...(options.jwt.audience ? { audience: options.jwt.audience } : {}),
        },
        // A missing token may still be an API-key or anonymous caller; a bad one is rejected.
        reject: { missingToken: false, invalidToken: true },
        extendContext: JWT_FIELD,
      }) as Plugin,
    );
  }
  plugins.push({
    onRequestParse({ request, serverContext }) {
      const apiKey = request.headers.get('x-api-key');
      if (apiKey !== null && keys.length > 0) {
        const index = matchApiKey(keys, apiKey);
        if (index < 0) throw unauthenticated('The API key is not valid.');
        callers.set(request, { id: `api-key:${index}` });
        return;
      }
      // useJWT ran first: it rejected a token that does not verify and kept the payload of one that does.
      const verified = (serverContext as { [JWT_FIELD]?: { payload?: { sub?: unknown } } })[JWT_FIELD];
      if (verified?.payload) {
        const subject = verified.payload.sub;
        callers.set(request, { id: typeof subject === 'string' ? `jwt:${subject}` : 'jwt' });
        return;
      }
      if (!options.allowAnonymous) {
        throw unauthenticated('Authentication required: send an API key in the x-api-key header.');
      }
    },
  });
  return plugins;
}
