/** The upstream clients of the configured services: one keep-alive pool each, one token and one session manager. */
import { Pool, type Dispatcher } from 'undici';
import { ByteReservations } from '../lib/byte-reservations.js';
import type { Config } from '../lib/config.js';
import { ContentLibraryClient, SessionManager } from './content-library/client.js';
import type { UpstreamEvents, UpstreamTracer } from './types.js';
import { UpstreamHttp } from './http.js';
import { AuditPageCache } from './identity/audit-cache.js';
import { IdentityClient, TokenManager } from './identity/client.js';
import { defaultRetryPolicy, type RetryPolicy } from './retry.js';
import type { SharedStore } from './shared-store/store.js';

export interface UpstreamOptions {
  readonly events?: UpstreamEvents;
  readonly tracer?: UpstreamTracer | undefined;
  readonly retry?: Partial<RetryPolicy>;
  /** Clock for token expiry, ms since epoch. */
  readonly now?: () => number;
  readonly interceptors?: readonly Dispatcher.DispatcherComposeInterceptor[];
  /** The replicas' shared store (REDIS_URL): closed audit pages are shared there. */
  readonly sharedStore?: SharedStore | undefined;
}

export type GatewayUpstreams = ReturnType<typeof createUpstreams>;

/** Answers this small (tokens, errors, small pages) skip UPSTREAM_MAX_BYTES_IN_FLIGHT: large ones never crowd them out. */
export const SMALL_ANSWER_BYTES = 64 * 1024;

export function createUpstreams(config: Config, options: UpstreamOptions = {}) {
  const { events, tracer, now } = options;
  const retry: RetryPolicy = { ...defaultRetryPolicy, ...options.retry };
  // One bound for both services: it is the process's heap that the answers being read share.
  const answerBytes = new ByteReservations(config.upstreamMaxBytesInFlight, SMALL_ANSWER_BYTES);
  // One pool per service, even on one origin: slow answers of one cannot take the connections the other waits for.
  const pools: Pool[] = [];
  const httpFor = (service: 'identity' | 'content-library', baseUrl: string) => {
    const pool = new Pool(new URL(baseUrl).origin, {
      connections: config.upstreamMaxConnections,
      keepAliveTimeout: 10_000,
      connectTimeout: Math.min(10_000, config.upstreamTimeoutMs),
      maxResponseSize: config.upstreamMaxBodyBytes,
    });
    pools.push(pool);
    const dispatcher = options.interceptors?.length ? pool.compose([...options.interceptors]) : pool;
    return new UpstreamHttp({ service, baseUrl, dispatcher, answerBytes, timeoutMs: config.upstreamTimeoutMs, retry, events, tracer });
  };

  let tokens: TokenManager | undefined;
  let auditCache: AuditPageCache | undefined;
  let identity: IdentityClient | undefined;
  if (config.identity) {
    const { baseUrl, clientId } = config.identity;
    const http = httpFor('identity', baseUrl);
    tokens = new TokenManager(http, config.identity, events, now);
    // Wall clock, not options.now: a token test's jumps in time must not close audit windows.
    const { auditCacheMaxBytes: maxBytes, auditCacheSettleMs: settleMs } = config;
    auditCache = maxBytes > 0 ? new AuditPageCache({ maxBytes, settleMs, events, shared: options.sharedStore }) : undefined;
    const cache = auditCache && { pages: auditCache, owner: { baseUrl, clientId } };
    identity = new IdentityClient(http, tokens, cache);
  }

  let sessions: SessionManager | undefined;
  let contentLibrary: ContentLibraryClient | undefined;
  if (config.contentLibrary) {
    const { url, vendor, credentials } = config.contentLibrary;
    const http = httpFor('content-library', url);
    sessions = credentials ? new SessionManager(http, vendor, credentials, events) : undefined;
    contentLibrary = new ContentLibraryClient(http, vendor, sessions);
  }

  // Idempotent; waits for calls in flight, which their deadlines bound.
  let closing: Promise<void> | undefined;
  return {
    identity,
    contentLibrary,
    /** Credential requests and audit cache use so far; auditCache undefined when AUDIT_CACHE_MAX_BYTES=0. */
    stats: () => ({
      token: tokens?.stats(),
      session: sessions?.stats(),
      auditCache: auditCache?.stats(),
      answerBytesInFlight: answerBytes.bytes,
    }),
    close() {
      closing ??= Promise.all(pools.map((pool) => pool.close())).then(() => undefined);
      return closing;
    },
  };
}
