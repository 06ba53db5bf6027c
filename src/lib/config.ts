/**
 * Configuration from the environment: parsed by zod, every problem reported at once naming its
 * variable (never its value), then one frozen object. See README "Configuration".
 */
import { z } from 'zod';

const unset = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const text = z.preprocess(unset, z.string().trim().optional());
const secret = z.preprocess(unset, z.string().optional());
const httpUrl = z.preprocess(
  unset,
  z
    .string()
    .trim()
    .refine((v) => URL.canParse(v) && ['http:', 'https:'].includes(new URL(v).protocol), {
      message: 'must be an absolute http(s) URL',
    })
    .transform((v) => v.replace(/\/+$/, ''))
    .optional(),
);
/** Every way a number can be wrong (not digits, too small, too large) gets the one message with its range. */
const wholeNumber = (min: number, max: number) => {
  const range = { message: `must be a whole number from ${min} to ${max}` };
  return z.string().regex(/^\d+$/, range).transform(Number).pipe(z.number().int().min(min, range).max(max, range));
};
const integer = (min: number, max: number, fallback: number) => z.preprocess(unset, wholeNumber(min, max).default(fallback));
const optionalInteger = (min: number, max: number) => z.preprocess(unset, wholeNumber(min, max).optional());
const flag = z.preprocess(
  unset,
  z
    .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
    .transform((v) => v === 'true' || v === '1')
    .default(false),
);
const list = z.preprocess(
  unset,
  z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    )
    .default([]),
);

const environmentSchema = z.object({
  PORT: integer(0, 65535, 4000),
  HOST: text.default('0.0.0.0'),
  IDENTITY_BASE_URL: httpUrl,
  IDENTITY_CLIENT_ID: text,
  IDENTITY_CLIENT_SECRET: secret,
  IDENTITY_TOKEN_SCOPE: text,
  CONTENT_LIBRARY_URL: httpUrl,
  CONTENT_LIBRARY_VENDOR: z.preprocess(
    unset,
    z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, { message: 'must be one path segment of letters, digits, - or _' })
      .default('vmware'),
  ),
  CONTENT_LIBRARY_USERNAME: text,
  CONTENT_LIBRARY_PASSWORD: secret,
  UPSTREAM_TIMEOUT_MS: integer(1, 600_000, 10_000),
  UPSTREAM_MAX_CONNECTIONS: integer(1, 1024, 32),
  UPSTREAM_MAX_BODY_BYTES: integer(64 * 1024, 256 * 1024 * 1024, 16 * 1024 * 1024),
  // Answer bytes being received and parsed at once, both services (src/upstream/http.ts; docs/hard-limits.md).
  UPSTREAM_MAX_BYTES_IN_FLIGHT: integer(64 * 1024, 16 * 1024 ** 3, 32 * 1024 * 1024),
  LARGE_OPERATION_CONCURRENCY: integer(1, 64, 2),
  GATEWAY_API_KEYS: list,
  GATEWAY_ALLOW_ANONYMOUS: flag,
  SHUTDOWN_GRACE_MS: integer(0, 600_000, 10_000),
  GATEWAY_JWT_JWKS_URL: httpUrl,
  GATEWAY_JWT_ISSUER: text,
  GATEWAY_JWT_AUDIENCE: text,
  GATEWAY_JWT_REQUIRE_EXP: z.preprocess(
    unset,
    z
      .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
      .transform((v) => v === 'true' || v === '1')
      .default(true),
  ),
  CORS_ORIGINS: list,
  GRAPHQL_INTROSPECTION: z.preprocess(
    unset,
    z.enum(['true', 'false', '1', '0', 'authenticated'], { message: 'must be true, false or authenticated' }).optional(),
  ),
  PERSISTED_OPERATIONS_FILE: text,
  PERSISTED_OPERATIONS_ONLY: flag,
  MAX_REQUEST_BYTES: integer(1024, 64 * 1024 * 1024, 256 * 1024),
  MAX_CONNECTIONS: integer(1, 1_000_000, 1024),
  REQUEST_TIMEOUT_MS: integer(100, 600_000, 30_000),
  // The memory budget for what callers make the process hold (docs/hard-limits.md: sized from the 256 MB heap).
  MAX_REQUEST_BYTES_IN_FLIGHT: integer(1024, 16 * 1024 ** 3, 16 * 1024 * 1024),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl,
  OTEL_SERVICE_NAME: text.default('identity-content-gateway'),
  // Heap bytes the cached audit pages may take, by estimate (pageHeapBytes), not their body bytes.
  AUDIT_CACHE_MAX_BYTES: integer(0, 16 * 1024 ** 3, 16 * 1024 * 1024),
  AUDIT_CACHE_SETTLE_MS: integer(0, 86_400_000, 60_000),
  SHUTDOWN_DELAY_MS: integer(0, 600_000, 2_000),
  METRICS_TOKEN: secret,
  SIMULATOR_PORT: integer(0, 65535, 0),
  LOG_PRETTY: z.preprocess(unset, z.enum(['true', 'false', '1', '0'], { message: 'must be true or false' }).optional()),
  AUDIT_LIVE_POLL_MS: integer(10, 3_600_000, 5000),
  AUDIT_LIVE_GIVE_UP_MS: integer(0, 86_400_000, 60_000),
  AUDIT_LIVE_MAX_SUBSCRIPTIONS: integer(0, 1_000_000, 1000),
  // Unset: a caller may hold every slot (browsers sharing one API key are one caller).
  AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER: optionalInteger(1, 1_000_000),
  AUDIT_LIVE_MAX_FILTERS: integer(1, 100_000, 100),
  DEMO_EVENT_INTERVAL_MS: integer(0, 3_600_000, 3000),
  REDIS_URL: z.preprocess(
    unset,
    z
      .string()
      .trim()
      .refine((v) => URL.canParse(v) && ['redis:', 'rediss:'].includes(new URL(v).protocol), {
        message: 'must be a redis:// or rediss:// URL',
      })
      .optional(),
  ),
  REDIS_KEY_PREFIX: z.preprocess(
    unset,
    z
      .string()
      .regex(/^[A-Za-z0-9_:.-]{1,64}$/, { message: 'must be 1 to 64 letters, digits, or _ : . -' })
      .default('gateway:'),
  ),
  REDIS_TIMEOUT_MS: integer(10, 60_000, 500),
  AUDIT_LIVE_LEASE_MS: integer(1000, 600_000, 15_000),
  LOG_LEVEL: z.preprocess(
    unset,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
});

type Environment = z.output<typeof environmentSchema>;

/** Every variable the configuration reads: what deploy examples may set. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(environmentSchema.shape);

export interface IdentityConfig {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope: string | undefined;
}

export interface ContentLibraryConfig {
  readonly url: string;
  readonly vendor: string;
  readonly credentials: { readonly username: string; readonly password: string } | undefined;
}

export interface RedisConfig {
  /** redis:// or rediss://, user and password included (for ACLs). */
  readonly url: string;
  /** Every key the gateway writes starts with it. */
  readonly keyPrefix: string;
  /** Deadline of each Redis call, in ms. */
  readonly timeoutMs: number;
  /** How long a live tail's lease lasts unless renewed. */
  readonly liveLeaseMs: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  /** demo: no upstream URL set; the embedded simulator serves both upstreams. */
  readonly mode: 'demo' | 'upstream';
  /** undefined: that upstream is disabled (upstream mode) or not yet started (demo mode). */
  readonly identity: IdentityConfig | undefined;
  readonly contentLibrary: ContentLibraryConfig | undefined;
  readonly contentLibraryVendor: string;
  readonly upstreamTimeoutMs: number;
  /** Deadline for one operation as a whole (REQUEST_TIMEOUT_MS): its upstream calls end by then (src/gateway/context.ts). */
  readonly requestTimeoutMs: number;
  /** Keep-alive connections per upstream origin; calls beyond wait for one. */
  readonly upstreamMaxConnections: number;
  /** Largest upstream answer body read; a longer one is UPSTREAM_INVALID_RESPONSE. */
  readonly upstreamMaxBodyBytes: number;
  /** Upstream answer bytes being received and parsed at once, both services; a call past it is UPSTREAM_UNAVAILABLE. */
  readonly upstreamMaxBytesInFlight: number;
  /** Operations asking for more than 1000 audit rows executed at once; the rest queue (bounds memory). */
  readonly largeOperationConcurrency: number;
  readonly apiKeys: readonly string[];
  readonly allowAnonymous: boolean;
  /** Caller JWTs are verified against this JWKS when set. */
  readonly jwt:
    | {
        readonly jwksUrl: string;
        readonly issuer?: string;
        readonly audience?: string;
        /** Tokens without `exp` are refused (they would be valid forever). */
        readonly requireExp: boolean;
      }
    | undefined;
  /** Browser origins allowed by CORS; empty: no cross-origin access. */
  readonly corsOrigins: readonly string[];
  /** Any http://localhost / 127.0.0.1 / [::1] origin may call (demo mode without CORS_ORIGINS). */
  readonly corsLoopbackOrigins: boolean;
  /** Who may introspect: everyone, callers with a key or JWT (not anonymous ones), or nobody. */
  readonly introspection: 'all' | 'authenticated' | 'off';
  readonly persistedOperations: { readonly file: string; readonly only: boolean } | undefined;
  readonly maxRequestBytes: number;
  /** What callers may hold open: connections, time to send a request, the memory budget of what they make the process hold. */
  readonly connections: {
    readonly maxConnections: number;
    readonly requestTimeoutMs: number;
    readonly maxRequestBytesInFlight: number;
  };
  /** OpenTelemetry traces go to this OTLP/HTTP endpoint when set. */
  readonly tracing: { readonly endpoint: string; readonly serviceName: string } | undefined;
  /** Bound of the closed-window audit page cache, in upstream body bytes; 0: no cache. */
  readonly auditCacheMaxBytes: number;
  /** A window counts as closed once its end is this long past (late-ingested events). */
  readonly auditCacheSettleMs: number;
  /** Live audit subscriptions: poll interval, how long a failing upstream is retried, how many at once. */
  readonly auditLive: {
    readonly pollMs: number;
    readonly giveUpMs: number;
    readonly maxSubscriptions: number;
    /** Open subscriptions per caller id; undefined: no limit but maxSubscriptions. */
    readonly maxSubscriptionsPerCaller: number | undefined;
    /** Distinct filters (hence pollers) at once. */
    readonly maxFilters: number;
  };
  /** Demo mode: the simulator adds a new audit event this often; 0: never. */
  readonly demoEventIntervalMs: number;
  /** State shared by replicas in Redis (REDIS_URL); undefined: each process keeps its own. */
  readonly redis: RedisConfig | undefined;
  /** How long SIGTERM waits for in-flight requests before closing their connections. */
  readonly shutdownGraceMs: number;
  /** How long SIGTERM keeps accepting connections (with /readyz at 503) before the listener closes. */
  readonly shutdownDelayMs: number;
  /** When set, /metrics requires `Authorization: Bearer <token>`. */
  readonly metricsToken: string | undefined;
  /** Demo mode: the embedded simulator's port (0: any free port). */
  readonly simulatorPort: number;
  /** Human-readable logs (pino-pretty) instead of JSON lines. */
  readonly logPretty: boolean;
  readonly logLevel: Environment['LOG_LEVEL'];
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Cross-variable rules, each reported under the variable a user has to set. */
function crossChecks(source: NodeJS.ProcessEnv): string[] {
  const valueOf = (name: string) => (source[name] ?? '').trim();
  const isSet = (name: string) => valueOf(name) !== '';
  const isTrue = (name: string) => ['true', '1'].includes(valueOf(name));
  const problems: string[] = [];
  const requireWith = (when: string, needed: string[]) => {
    if (!isSet(when)) return;
    for (const name of needed) if (!isSet(name)) problems.push(`${name}: required when ${when} is set`);
  };
  requireWith('IDENTITY_BASE_URL', ['IDENTITY_CLIENT_ID', 'IDENTITY_CLIENT_SECRET']);
  requireWith('CONTENT_LIBRARY_USERNAME', ['CONTENT_LIBRARY_PASSWORD']);
  requireWith('CONTENT_LIBRARY_PASSWORD', ['CONTENT_LIBRARY_USERNAME']);

  const upstreamMode = isSet('IDENTITY_BASE_URL') || isSet('CONTENT_LIBRARY_URL');
  const keys = valueOf('GATEWAY_API_KEYS').split(',').some((k) => k.trim() !== '');
  if (upstreamMode && !keys && !isSet('GATEWAY_JWT_JWKS_URL') && !isTrue('GATEWAY_ALLOW_ANONYMOUS')) {
    problems.push(
      'GATEWAY_API_KEYS: required in upstream mode, so that callers must authenticate ' +
        '(or set GATEWAY_JWT_JWKS_URL for JWT callers, or GATEWAY_ALLOW_ANONYMOUS=true to let anyone in)',
    );
  }
  if (isTrue('PERSISTED_OPERATIONS_ONLY') && !isSet('PERSISTED_OPERATIONS_FILE')) {
    problems.push('PERSISTED_OPERATIONS_FILE: required when PERSISTED_OPERATIONS_ONLY is true');
  }
  return problems;
}

/**
 * Everyone may introspect in demo mode. In upstream mode key holders may (GraphiQL's docs and
 * autocomplete work for them), anonymous callers may not, unless set otherwise.
 */
function introspectionFor(value: string | undefined, mode: Config['mode']): Config['introspection'] {
  if (value === undefined) return mode === 'demo' ? 'all' : 'authenticated';
  if (value === 'authenticated') return 'authenticated';
  return ['true', '1'].includes(value) ? 'all' : 'off';
}

/** The variable a zod issue is about. */
// Stryker disable next-line StringLiteral: every variable is a top-level key, so a path has one element and no separator shows
const variableOf = (path: readonly PropertyKey[]) => path.join('.');

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const parsed = environmentSchema.safeParse(source);
  const problems = [
    ...(parsed.error?.issues.map((i) => `${variableOf(i.path)}: ${i.message}`) ?? []),
    ...crossChecks(source),
  ];
  if (parsed.success && parsed.data.MAX_REQUEST_BYTES_IN_FLIGHT < parsed.data.MAX_REQUEST_BYTES) {
    problems.push('MAX_REQUEST_BYTES_IN_FLIGHT: must be at least MAX_REQUEST_BYTES, or a body of the largest size is never accepted');
  }
  if (parsed.success && parsed.data.UPSTREAM_MAX_BYTES_IN_FLIGHT < parsed.data.UPSTREAM_MAX_BODY_BYTES) {
    problems.push('UPSTREAM_MAX_BYTES_IN_FLIGHT: must be at least UPSTREAM_MAX_BODY_BYTES, or an answer of the largest size is never read');
  }
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const env = parsed.data;

  const mode = env.IDENTITY_BASE_URL || env.CONTENT_LIBRARY_URL ? 'upstream' : 'demo';
  return Object.freeze({
    port: env.PORT,
    host: env.HOST,
    mode,
    identity: env.IDENTITY_BASE_URL
      ? Object.freeze({
          baseUrl: env.IDENTITY_BASE_URL,
          clientId: env.IDENTITY_CLIENT_ID!,
          clientSecret: env.IDENTITY_CLIENT_SECRET!,
          scope: env.IDENTITY_TOKEN_SCOPE,
        })
      : undefined,
    contentLibrary: env.CONTENT_LIBRARY_URL
      ? Object.freeze({
          url: env.CONTENT_LIBRARY_URL,
          vendor: env.CONTENT_LIBRARY_VENDOR,
          credentials: env.CONTENT_LIBRARY_USERNAME
            ? Object.freeze({ username: env.CONTENT_LIBRARY_USERNAME, password: env.CONTENT_LIBRARY_PASSWORD! })
            : undefined,
        })
      : undefined,
    contentLibraryVendor: env.CONTENT_LIBRARY_VENDOR,
    upstreamTimeoutMs: env.UPSTREAM_TIMEOUT_MS,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    upstreamMaxConnections: env.UPSTREAM_MAX_CONNECTIONS,
    upstreamMaxBodyBytes: env.UPSTREAM_MAX_BODY_BYTES,
    upstreamMaxBytesInFlight: env.UPSTREAM_MAX_BYTES_IN_FLIGHT,
    largeOperationConcurrency: env.LARGE_OPERATION_CONCURRENCY,
    apiKeys: Object.freeze([...env.GATEWAY_API_KEYS]),
    allowAnonymous: env.GATEWAY_ALLOW_ANONYMOUS || mode === 'demo',
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    jwt: env.GATEWAY_JWT_JWKS_URL
      ? Object.freeze({
          jwksUrl: env.GATEWAY_JWT_JWKS_URL,
          ...(env.GATEWAY_JWT_ISSUER ? { issuer: env.GATEWAY_JWT_ISSUER } : {}),
          ...(env.GATEWAY_JWT_AUDIENCE ? { audience: env.GATEWAY_JWT_AUDIENCE } : {}),
          requireExp: env.GATEWAY_JWT_REQUIRE_EXP,
        })
      : undefined,
    corsOrigins: Object.freeze([...env.CORS_ORIGINS]),
    // A local front end (a dev server on another port) can try the demo without configuration.
    corsLoopbackOrigins: mode === 'demo' && env.CORS_ORIGINS.length === 0,
    introspection: introspectionFor(env.GRAPHQL_INTROSPECTION, mode),
    persistedOperations: env.PERSISTED_OPERATIONS_FILE
      ? Object.freeze({ file: env.PERSISTED_OPERATIONS_FILE, only: env.PERSISTED_OPERATIONS_ONLY })
      : undefined,
    maxRequestBytes: env.MAX_REQUEST_BYTES,
    connections: Object.freeze({
      maxConnections: env.MAX_CONNECTIONS,
      requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
      maxRequestBytesInFlight: env.MAX_REQUEST_BYTES_IN_FLIGHT,
    }),
    tracing: env.OTEL_EXPORTER_OTLP_ENDPOINT
      ? Object.freeze({ endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: env.OTEL_SERVICE_NAME })
      : undefined,
    auditCacheMaxBytes: env.AUDIT_CACHE_MAX_BYTES,
    auditCacheSettleMs: env.AUDIT_CACHE_SETTLE_MS,
    shutdownDelayMs: env.SHUTDOWN_DELAY_MS,
    metricsToken: env.METRICS_TOKEN,
    simulatorPort: env.SIMULATOR_PORT,
    // `npm run dev` is for people reading the terminal: pretty unless told otherwise.
    logPretty: env.LOG_PRETTY === undefined ? source.npm_lifecycle_event === 'dev' : ['true', '1'].includes(env.LOG_PRETTY),
    auditLive: Object.freeze({
      pollMs: env.AUDIT_LIVE_POLL_MS,
      giveUpMs: env.AUDIT_LIVE_GIVE_UP_MS,
      maxSubscriptions: env.AUDIT_LIVE_MAX_SUBSCRIPTIONS,
      maxSubscriptionsPerCaller: env.AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER,
      maxFilters: env.AUDIT_LIVE_MAX_FILTERS,
    }),
    demoEventIntervalMs: env.DEMO_EVENT_INTERVAL_MS,
    redis: env.REDIS_URL
      ? Object.freeze({
          url: env.REDIS_URL,
          keyPrefix: env.REDIS_KEY_PREFIX,
          timeoutMs: env.REDIS_TIMEOUT_MS,
          liveLeaseMs: env.AUDIT_LIVE_LEASE_MS,
        })
      : undefined,
    logLevel: env.LOG_LEVEL,
  });
}
