/** Configuration from the environment: every problem reported at once, naming its variable (never its value). */
import { z } from 'zod';

/** A blank or whitespace-only value is unset: its default. */
const variable = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema);
const isTrue = (v: string) => v === 'true' || v === '1';

const text = variable(z.string().trim().optional());
const secret = variable(z.string().optional());
const urlWith = (protocols: string[], message: string) =>
  z.string().trim().refine((v) => URL.canParse(v) && protocols.includes(new URL(v).protocol), { message });
const withoutTrailingSlashes = (v: string) => v.replace(/\/+$/, '');
const httpUrl = variable(
  urlWith(['http:', 'https:'], 'must be an absolute http(s) URL').transform(withoutTrailingSlashes).optional(),
);
const matching = (pattern: RegExp, message: string, fallback: string) =>
  variable(z.string().regex(pattern, { message }).default(fallback));
/** Every way a number can be wrong (not digits, too small, too large) gets the one message with its range. */
const wholeNumber = (min: number, max: number) => {
  const range = { message: `must be a whole number from ${min} to ${max}` };
  return z.string().regex(/^\d+$/, range).transform(Number).pipe(z.number().int().min(min, range).max(max, range));
};
const integer = (min: number, max: number, fallback: number) => variable(wholeNumber(min, max).default(fallback));
const flagValue = z.enum(['true', 'false', '1', '0'], { message: 'must be true or false' }).transform(isTrue);
const flag = (fallback: boolean) => variable(flagValue.default(fallback));
const commaSeparated = (v: string) => v.split(',').map((item) => item.trim()).filter(Boolean);
const list = variable(z.string().transform(commaSeparated).default([]));
const GiB = 1024 ** 3;
const MiB = 1024 * 1024;

const environmentSchema = z.object({
  PORT: integer(0, 65535, 4000),
  HOST: text.default('0.0.0.0'),
  IDENTITY_BASE_URL: httpUrl,
  IDENTITY_CLIENT_ID: text,
  IDENTITY_CLIENT_SECRET: secret,
  IDENTITY_TOKEN_SCOPE: text,
  CONTENT_LIBRARY_URL: httpUrl,
  CONTENT_LIBRARY_VENDOR: matching(/^[A-Za-z0-9_-]+$/, 'must be one path segment of letters, digits, - or _', 'vmware'),
  CONTENT_LIBRARY_USERNAME: text,
  CONTENT_LIBRARY_PASSWORD: secret,
  UPSTREAM_TIMEOUT_MS: integer(1, 600_000, 10_000),
  UPSTREAM_MAX_CONNECTIONS: integer(1, 1024, 32),
  UPSTREAM_MAX_BODY_BYTES: integer(64 * 1024, 256 * MiB, 16 * MiB),
  UPSTREAM_MAX_BYTES_IN_FLIGHT: integer(64 * 1024, 16 * GiB, 32 * MiB),
  LARGE_OPERATION_CONCURRENCY: integer(1, 64, 2),
  GATEWAY_API_KEYS: list,
  GATEWAY_ALLOW_ANONYMOUS: flag(false),
  SHUTDOWN_GRACE_MS: integer(0, 600_000, 10_000),
  GATEWAY_JWT_JWKS_URL: httpUrl,
  GATEWAY_JWT_ISSUER: text,
  GATEWAY_JWT_AUDIENCE: text,
  GATEWAY_JWT_REQUIRE_EXP: flag(true),
  CORS_ORIGINS: list,
  GRAPHQL_INTROSPECTION: variable(
    z
      .enum(['true', 'false', '1', '0', 'authenticated'], { message: 'must be true, false or authenticated' })
      .transform((v) => (v === 'authenticated' ? v : isTrue(v) ? 'all' : 'off'))
      .optional(),
  ),
  PERSISTED_OPERATIONS_FILE: text,
  PERSISTED_OPERATIONS_ONLY: flag(false),
  MAX_REQUEST_BYTES: integer(1024, 64 * MiB, 256 * 1024),
  MAX_CONNECTIONS: integer(1, 1_000_000, 1024),
  REQUEST_TIMEOUT_MS: integer(100, 600_000, 30_000),
  MAX_REQUEST_BYTES_IN_FLIGHT: integer(1024, 16 * GiB, 16 * MiB),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl,
  OTEL_SERVICE_NAME: text.default('identity-content-gateway'),
  // Heap bytes of the cached audit pages, by estimate, not their body bytes.
  AUDIT_CACHE_MAX_BYTES: integer(0, 16 * GiB, 16 * MiB),
  AUDIT_CACHE_SETTLE_MS: integer(0, 86_400_000, 60_000),
  SHUTDOWN_DELAY_MS: integer(0, 600_000, 2_000),
  METRICS_TOKEN: secret,
  SIMULATOR_PORT: integer(0, 65535, 0),
  LOG_PRETTY: variable(flagValue.optional()),
  AUDIT_LIVE_POLL_MS: integer(10, 3_600_000, 5000),
  AUDIT_LIVE_GIVE_UP_MS: integer(0, 86_400_000, 60_000),
  AUDIT_LIVE_MAX_SUBSCRIPTIONS: integer(0, 1_000_000, 1000),
  // Unset: a caller may hold every slot (browsers sharing one API key are one caller).
  AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER: variable(wholeNumber(1, 1_000_000).optional()),
  AUDIT_LIVE_MAX_FILTERS: integer(1, 100_000, 100),
  DEMO_EVENT_INTERVAL_MS: integer(0, 3_600_000, 3000),
  REDIS_URL: variable(urlWith(['redis:', 'rediss:'], 'must be a redis:// or rediss:// URL').optional()),
  REDIS_KEY_PREFIX: matching(/^[A-Za-z0-9_:.-]{1,64}$/, 'must be 1 to 64 letters, digits, or _ : . -', 'gateway:'),
  REDIS_TIMEOUT_MS: integer(10, 60_000, 500),
  AUDIT_LIVE_LEASE_MS: integer(1000, 600_000, 15_000),
  LOG_LEVEL: variable(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')),
});

/** Every variable the configuration reads: what deploy examples may set. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(environmentSchema.shape);

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Cross-variable rules, read from the raw values, each reported under the variable a user has to set. */
function crossChecks(source: NodeJS.ProcessEnv): string[] {
  const valueOf = (name: string) => (source[name] ?? '').trim();
  const problems: string[] = [];
  const requireWith = (when: string, needed: string[]) => {
    if (!valueOf(when)) return;
    for (const name of needed) if (!valueOf(name)) problems.push(`${name}: required when ${when} is set`);
  };
  requireWith('IDENTITY_BASE_URL', ['IDENTITY_CLIENT_ID', 'IDENTITY_CLIENT_SECRET']);
  requireWith('CONTENT_LIBRARY_USERNAME', ['CONTENT_LIBRARY_PASSWORD']);
  requireWith('CONTENT_LIBRARY_PASSWORD', ['CONTENT_LIBRARY_USERNAME']);

  const upstreamMode = valueOf('IDENTITY_BASE_URL') || valueOf('CONTENT_LIBRARY_URL');
  const authenticated = commaSeparated(valueOf('GATEWAY_API_KEYS')).length > 0 || valueOf('GATEWAY_JWT_JWKS_URL');
  if (upstreamMode && !authenticated && !isTrue(valueOf('GATEWAY_ALLOW_ANONYMOUS'))) {
    problems.push(
      'GATEWAY_API_KEYS: required in upstream mode, so that callers must authenticate ' +
        '(or set GATEWAY_JWT_JWKS_URL for JWT callers, or GATEWAY_ALLOW_ANONYMOUS=true to let anyone in)',
    );
  }
  if (isTrue(valueOf('PERSISTED_OPERATIONS_ONLY')) && !valueOf('PERSISTED_OPERATIONS_FILE')) {
    problems.push('PERSISTED_OPERATIONS_FILE: required when PERSISTED_OPERATIONS_ONLY is true');
  }
  return problems;
}

/** A frozen section made from the variable that enables it, or undefined when that variable is unset. */
const section = <V, T extends object>(value: V | undefined, make: (value: V) => T) =>
  value ? Object.freeze(make(value)) : undefined;

export function loadConfig(source: NodeJS.ProcessEnv = process.env) {
  const parsed = environmentSchema.safeParse(source);
  const problems = [...(parsed.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? []), ...crossChecks(source)];
  if (parsed.success && parsed.data.MAX_REQUEST_BYTES_IN_FLIGHT < parsed.data.MAX_REQUEST_BYTES) {
    problems.push('MAX_REQUEST_BYTES_IN_FLIGHT: must be at least MAX_REQUEST_BYTES, or a body of the largest size is never accepted');
  }
  if (parsed.success && parsed.data.UPSTREAM_MAX_BYTES_IN_FLIGHT < parsed.data.UPSTREAM_MAX_BODY_BYTES) {
    problems.push('UPSTREAM_MAX_BYTES_IN_FLIGHT: must be at least UPSTREAM_MAX_BODY_BYTES, or an answer of the largest size is never read');
  }
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const env = parsed.data;

  const mode: 'demo' | 'upstream' = env.IDENTITY_BASE_URL || env.CONTENT_LIBRARY_URL ? 'upstream' : 'demo';
  return Object.freeze({
    port: env.PORT,
    host: env.HOST,
    mode,
    /** Undefined: that upstream is disabled (upstream mode) or not yet started (demo mode). */
    identity: section(env.IDENTITY_BASE_URL, (baseUrl) => ({
      baseUrl,
      clientId: env.IDENTITY_CLIENT_ID!,
      clientSecret: env.IDENTITY_CLIENT_SECRET!,
      scope: env.IDENTITY_TOKEN_SCOPE,
    })),
    contentLibrary: section(env.CONTENT_LIBRARY_URL, (url) => ({
      url,
      vendor: env.CONTENT_LIBRARY_VENDOR,
      credentials: section(env.CONTENT_LIBRARY_USERNAME, (username) => ({ username, password: env.CONTENT_LIBRARY_PASSWORD! })),
    })),
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
    jwt: section(env.GATEWAY_JWT_JWKS_URL, (jwksUrl) => ({
      jwksUrl,
      ...(env.GATEWAY_JWT_ISSUER ? { issuer: env.GATEWAY_JWT_ISSUER } : {}),
      ...(env.GATEWAY_JWT_AUDIENCE ? { audience: env.GATEWAY_JWT_AUDIENCE } : {}),
      requireExp: env.GATEWAY_JWT_REQUIRE_EXP,
    })),
    corsOrigins: Object.freeze([...env.CORS_ORIGINS]),
    /** A local front end (a dev server on another port) can try the demo without configuration. */
    corsLoopbackOrigins: mode === 'demo' && env.CORS_ORIGINS.length === 0,
    /** Key holders may introspect in upstream mode (GraphiQL's docs work for them), everyone in the demo. */
    introspection: env.GRAPHQL_INTROSPECTION ?? (mode === 'demo' ? 'all' : 'authenticated'),
    persistedOperations: section(env.PERSISTED_OPERATIONS_FILE, (file) => ({ file, only: env.PERSISTED_OPERATIONS_ONLY })),
    maxRequestBytes: env.MAX_REQUEST_BYTES,
    connections: Object.freeze({
      maxConnections: env.MAX_CONNECTIONS,
      requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
      maxRequestBytesInFlight: env.MAX_REQUEST_BYTES_IN_FLIGHT,
    }),
    tracing: section(env.OTEL_EXPORTER_OTLP_ENDPOINT, (endpoint) => ({ endpoint, serviceName: env.OTEL_SERVICE_NAME })),
    auditCacheMaxBytes: env.AUDIT_CACHE_MAX_BYTES,
    auditCacheSettleMs: env.AUDIT_CACHE_SETTLE_MS,
    shutdownDelayMs: env.SHUTDOWN_DELAY_MS,
    metricsToken: env.METRICS_TOKEN,
    simulatorPort: env.SIMULATOR_PORT,
    /** `npm run dev` is for people reading the terminal: pretty unless told otherwise. */
    logPretty: env.LOG_PRETTY ?? source.npm_lifecycle_event === 'dev',
    auditLive: Object.freeze({
      pollMs: env.AUDIT_LIVE_POLL_MS,
      giveUpMs: env.AUDIT_LIVE_GIVE_UP_MS,
      maxSubscriptions: env.AUDIT_LIVE_MAX_SUBSCRIPTIONS,
      maxSubscriptionsPerCaller: env.AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER,
      maxFilters: env.AUDIT_LIVE_MAX_FILTERS,
    }),
    demoEventIntervalMs: env.DEMO_EVENT_INTERVAL_MS,
    /** Undefined: each process keeps its own state. */
    redis: section(env.REDIS_URL, (url) => ({
      url,
      keyPrefix: env.REDIS_KEY_PREFIX,
      timeoutMs: env.REDIS_TIMEOUT_MS,
      liveLeaseMs: env.AUDIT_LIVE_LEASE_MS,
    })),
    logLevel: env.LOG_LEVEL,
  });
}

export type Config = ReturnType<typeof loadConfig>;
export type IdentityConfig = NonNullable<Config['identity']>;
export type RedisConfig = NonNullable<Config['redis']>;
