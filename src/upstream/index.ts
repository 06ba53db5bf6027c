/**
 * Builds the upstream clients for the configured services: one keep-alive pool per origin, one
 * token manager, one session manager, shared by every request until close().
 */
import type { Logger } from 'pino';
import { Pool, type Dispatcher } from 'undici';
import type { Config } from '../config.js';
import { ContentLibraryClient } from './content-library/client.js';
import { SessionManager, type SessionStats } from './content-library/session.js';
import type { UpstreamEvents } from './events.js';
import { UpstreamHttp } from './http.js';
import { IdentityClient } from './identity/client.js';
import { TokenManager, type TokenStats } from './identity/token.js';
import { defaultRetryPolicy, type RetryPolicy } from './retry.js';
import type { Upstreams } from './types.js';

export interface UpstreamOptions {
  /** Hooks for a metrics layer. */
  readonly events?: UpstreamEvents;
  readonly retry?: Partial<RetryPolicy>;
  /** Clock for token expiry, ms since epoch; tests inject one. */
  readonly now?: () => number;
  /** Keep-alive connections per origin. Default 32. */
  readonly connectionsPerOrigin?: number;
  /** undici interceptors composed onto every pool (tracing, tests that watch the wire). */
  readonly interceptors?: readonly Dispatcher.DispatcherComposeInterceptor[];
}

export interface UpstreamStats {
  readonly token: TokenStats | undefined;
  readonly session: SessionStats | undefined;
}

export interface GatewayUpstreams extends Upstreams {
  readonly identity: IdentityClient | undefined;
  readonly contentLibrary: ContentLibraryClient | undefined;
  /** Credential requests made so far (tests, diagnostics). */
  stats(): UpstreamStats;
}

/** A body larger than this is refused rather than buffered (a full 5000-row page is a few MB). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export function createUpstreams(config: Config, log: Logger, options: UpstreamOptions = {}): GatewayUpstreams {
  const retry: RetryPolicy = { ...defaultRetryPolicy, ...options.retry };
  const pools = new Map<string, Pool>();
  const dispatchers = new Map<string, Dispatcher>();
  const poolFor = (baseUrl: string): Dispatcher => {
    const origin = new URL(baseUrl).origin;
    let dispatcher = dispatchers.get(origin);
    if (!dispatcher) {
      const pool = new Pool(origin, {
        connections: options.connectionsPerOrigin ?? 32,
        keepAliveTimeout: 10_000,
        connectTimeout: Math.min(10_000, config.upstreamTimeoutMs),
        maxResponseSize: MAX_RESPONSE_BYTES,
      });
      pools.set(origin, pool);
      dispatcher = options.interceptors?.length ? pool.compose([...options.interceptors]) : pool;
      dispatchers.set(origin, dispatcher);
    }
    return dispatcher;
  };
  const httpFor = (service: 'identity' | 'content-library', baseUrl: string) =>
    new UpstreamHttp({
      service,
      baseUrl,
      dispatcher: poolFor(baseUrl),
      timeoutMs: config.upstreamTimeoutMs,
      retry,
      events: options.events,
    });
  const upstreamLog = log.child({ component: 'upstream' });

  let tokens: TokenManager | undefined;
  let identity: IdentityClient | undefined;
  if (config.identity) {
    const http = httpFor('identity', config.identity.baseUrl);
    tokens = new TokenManager({ http, config: config.identity, log: upstreamLog, events: options.events, now: options.now });
    identity = new IdentityClient({ http, tokens });
  }

  let sessions: SessionManager | undefined;
  let contentLibrary: ContentLibraryClient | undefined;
  if (config.contentLibrary) {
    const { url, vendor, credentials } = config.contentLibrary;
    const http = httpFor('content-library', url);
    sessions = credentials ? new SessionManager({ http, vendor, credentials, events: options.events }) : undefined;
    contentLibrary = new ContentLibraryClient({ http, vendor, sessions });
  }

  // Idempotent; waits for calls in flight, which their deadlines bound.
  let closing: Promise<void> | undefined;
  return {
    identity,
    contentLibrary,
    stats: () => ({ token: tokens?.stats(), session: sessions?.stats() }),
    close() {
      closing ??= Promise.all([...pools.values()].map((pool) => pool.close())).then(() => undefined);
      return closing;
    },
  };
}

export type { UpstreamCallEvent, CredentialRenewalEvent, UpstreamEvents } from './events.js';
export type { RetryPolicy } from './retry.js';
export type { TokenStats } from './identity/token.js';
export type { SessionStats } from './content-library/session.js';
