import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/lib/config.js';
import { problemsOf } from './helpers/config-problems.js';

const upstream = {
  IDENTITY_BASE_URL: 'https://tenant.example.com/',
  IDENTITY_CLIENT_ID: 'gateway',
  IDENTITY_CLIENT_SECRET: 'top-secret-value',
  GATEWAY_API_KEYS: 'key-one, key-two',
};


describe('configuration', () => {
  it('lets local front ends call the demo, and only the listed origins once CORS_ORIGINS is set or upstreams are real', () => {
    expect(loadConfig({}).corsLoopbackOrigins).toBe(true);
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com' })).toMatchObject({
      corsLoopbackOrigins: false,
      corsOrigins: ['https://app.example.com'],
    });
    expect(loadConfig({ IDENTITY_BASE_URL: 'http://id.example', IDENTITY_CLIENT_ID: 'c', IDENTITY_CLIENT_SECRET: 's', GATEWAY_API_KEYS: 'k' }).corsLoopbackOrigins).toBe(false);
  });

  it('runs in demo mode with defaults when no upstream URL is set', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      mode: 'demo',
      port: 4000,
      host: '0.0.0.0',
      upstreamTimeoutMs: 10_000,
      upstreamMaxBodyBytes: 16 * 1024 * 1024,
      upstreamMaxBytesInFlight: 32 * 1024 * 1024,
      auditCacheMaxBytes: 16 * 1024 * 1024,
      auditCacheSettleMs: 60_000,
      contentLibraryVendor: 'vmware',
      allowAnonymous: true,
      identity: undefined,
      contentLibrary: undefined,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every variable of upstream mode into one frozen object', () => {
    const config = loadConfig({
      ...upstream,
      PORT: '8080',
      HOST: '127.0.0.1',
      IDENTITY_TOKEN_SCOPE: 'admin',
      CONTENT_LIBRARY_URL: 'https://vcenter.example.com',
      CONTENT_LIBRARY_VENDOR: 'acme',
      CONTENT_LIBRARY_USERNAME: 'reader',
      CONTENT_LIBRARY_PASSWORD: 'pw',
      UPSTREAM_TIMEOUT_MS: '2500',
      REQUEST_TIMEOUT_MS: '7000',
      UPSTREAM_MAX_BODY_BYTES: '8388608',
      UPSTREAM_MAX_BYTES_IN_FLIGHT: '33554432',
      AUDIT_CACHE_MAX_BYTES: '0',
      AUDIT_CACHE_SETTLE_MS: '120000',
    });
    expect(config).toMatchObject({
      mode: 'upstream',
      port: 8080,
      host: '127.0.0.1',
      upstreamTimeoutMs: 2500,
      requestTimeoutMs: 7000,
      connections: expect.objectContaining({ requestTimeoutMs: 7000 }),
      upstreamMaxBodyBytes: 8 * 1024 * 1024,
      upstreamMaxBytesInFlight: 32 * 1024 * 1024,
      auditCacheMaxBytes: 0,
      auditCacheSettleMs: 120_000,
      apiKeys: ['key-one', 'key-two'],
      allowAnonymous: false,
      identity: { baseUrl: 'https://tenant.example.com', clientId: 'gateway', scope: 'admin' },
      contentLibrary: {
        url: 'https://vcenter.example.com',
        vendor: 'acme',
        credentials: { username: 'reader', password: 'pw' },
      },
    });
    expect(Object.isFrozen(config.identity)).toBe(true);
  });

  it('disables an upstream whose URL is unset', () => {
    const config = loadConfig({ ...upstream });
    expect(config.mode).toBe('upstream');
    expect(config.contentLibrary).toBeUndefined();
  });

  it.each([
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['UPSTREAM_TIMEOUT_MS', { UPSTREAM_TIMEOUT_MS: '-5' }],
    ['UPSTREAM_TIMEOUT_MS', { UPSTREAM_TIMEOUT_MS: '0' }],
    ['IDENTITY_BASE_URL', { IDENTITY_BASE_URL: 'not a url' }],
    ['IDENTITY_BASE_URL', { IDENTITY_BASE_URL: 'ftp://tenant.example.com' }],
    ['CONTENT_LIBRARY_URL', { CONTENT_LIBRARY_URL: '://nope' }],
    ['CONTENT_LIBRARY_VENDOR', { CONTENT_LIBRARY_VENDOR: 'a/b' }],
    ['GATEWAY_ALLOW_ANONYMOUS', { GATEWAY_ALLOW_ANONYMOUS: 'yes please' }],
    ['IDENTITY_CLIENT_SECRET', { IDENTITY_CLIENT_SECRET: '' }],
    ['IDENTITY_CLIENT_ID', { IDENTITY_CLIENT_ID: '' }],
    ['CONTENT_LIBRARY_PASSWORD', { CONTENT_LIBRARY_USERNAME: 'reader' }],
    ['CONTENT_LIBRARY_USERNAME', { CONTENT_LIBRARY_PASSWORD: 'pw' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }],
    ['GATEWAY_JWT_JWKS_URL', { GATEWAY_JWT_JWKS_URL: 'jwks.json' }],
    ['MAX_REQUEST_BYTES', { MAX_REQUEST_BYTES: '10' }],
    ['GRAPHQL_INTROSPECTION', { GRAPHQL_INTROSPECTION: 'sometimes' }],
    ['PERSISTED_OPERATIONS_FILE', { PERSISTED_OPERATIONS_ONLY: 'true' }],
    ['SHUTDOWN_GRACE_MS', { SHUTDOWN_GRACE_MS: 'later' }],
    ['AUDIT_CACHE_MAX_BYTES', { AUDIT_CACHE_MAX_BYTES: '-1' }],
    ['AUDIT_CACHE_MAX_BYTES', { AUDIT_CACHE_MAX_BYTES: '64MB' }],
    ['AUDIT_CACHE_MAX_BYTES', { AUDIT_CACHE_MAX_BYTES: '1.5' }],
    ['AUDIT_CACHE_MAX_BYTES', { AUDIT_CACHE_MAX_BYTES: String(2 ** 40) }],
    ['UPSTREAM_MAX_BODY_BYTES', { UPSTREAM_MAX_BODY_BYTES: '16MB' }],
    ['UPSTREAM_MAX_BODY_BYTES', { UPSTREAM_MAX_BODY_BYTES: '100' }],
    ['UPSTREAM_MAX_BODY_BYTES', { UPSTREAM_MAX_BODY_BYTES: String(2 ** 30) }],
    ['AUDIT_CACHE_SETTLE_MS', { AUDIT_CACHE_SETTLE_MS: 'a minute' }],
    ['AUDIT_CACHE_SETTLE_MS', { AUDIT_CACHE_SETTLE_MS: '-60000' }],
    ['AUDIT_CACHE_SETTLE_MS', { AUDIT_CACHE_SETTLE_MS: '86400001' }],
    ['SHUTDOWN_DELAY_MS', { SHUTDOWN_DELAY_MS: 'two seconds' }],
    ['SIMULATOR_PORT', { SIMULATOR_PORT: '70000' }],
    ['LOG_PRETTY', { LOG_PRETTY: 'very' }],
    ['GATEWAY_JWT_REQUIRE_EXP', { GATEWAY_JWT_REQUIRE_EXP: 'nah' }],
    ['MAX_CONNECTIONS', { MAX_CONNECTIONS: '0' }],
    ['MAX_CONNECTIONS', { MAX_CONNECTIONS: 'many' }],
    ['REQUEST_TIMEOUT_MS', { REQUEST_TIMEOUT_MS: '0' }],
    ['REQUEST_TIMEOUT_MS', { REQUEST_TIMEOUT_MS: '30s' }],
    ['MAX_REQUEST_BYTES_IN_FLIGHT', { MAX_REQUEST_BYTES_IN_FLIGHT: '32MB' }],
    ['MAX_REQUEST_BYTES_IN_FLIGHT', { MAX_REQUEST_BYTES_IN_FLIGHT: '100000' }],
    ['MAX_REQUEST_BYTES_IN_FLIGHT', { MAX_REQUEST_BYTES: '2097152', MAX_REQUEST_BYTES_IN_FLIGHT: '1048576' }],
    ['UPSTREAM_MAX_BYTES_IN_FLIGHT', { UPSTREAM_MAX_BYTES_IN_FLIGHT: '64MB' }],
    ['UPSTREAM_MAX_BYTES_IN_FLIGHT', { UPSTREAM_MAX_BYTES_IN_FLIGHT: '1000' }],
    ['UPSTREAM_MAX_BYTES_IN_FLIGHT', { UPSTREAM_MAX_BYTES_IN_FLIGHT: String(2 ** 40) }],
    // The default body cap (16 MB) would never fit.
    ['UPSTREAM_MAX_BYTES_IN_FLIGHT', { UPSTREAM_MAX_BYTES_IN_FLIGHT: '8388608' }],
  ])('names %s when it is wrong', (variable, override) => {
    const problems = problemsOf({ ...upstream, ...override });
    expect(problems.some((p) => p.startsWith(`${variable}:`))).toBe(true);
  });

  it('reads the operations variables: drain delay, metrics token, demo simulator port, log format', () => {
    expect(loadConfig({})).toMatchObject({ shutdownDelayMs: 2000, metricsToken: undefined, simulatorPort: 0, logPretty: false });
    expect(
      loadConfig({ SHUTDOWN_DELAY_MS: '0', METRICS_TOKEN: 'scrape-me', SIMULATOR_PORT: '4010', LOG_PRETTY: 'true' }),
    ).toMatchObject({ shutdownDelayMs: 0, metricsToken: 'scrape-me', simulatorPort: 4010, logPretty: true });
  });

  it('reads the connection limits: connections, request timeout, request bytes in flight', () => {
    expect(loadConfig({}).connections).toEqual({ maxConnections: 1024, requestTimeoutMs: 30_000, maxRequestBytesInFlight: 16 * 1024 * 1024 });
    expect(
      loadConfig({ MAX_CONNECTIONS: '10000', REQUEST_TIMEOUT_MS: '5000', MAX_REQUEST_BYTES: '1048576', MAX_REQUEST_BYTES_IN_FLIGHT: '1048576' }).connections,
    ).toEqual({ maxConnections: 10_000, requestTimeoutMs: 5000, maxRequestBytesInFlight: 1024 * 1024 });
  });

  it('writes readable logs under `npm run dev` unless LOG_PRETTY says otherwise', () => {
    expect(loadConfig({ npm_lifecycle_event: 'dev' }).logPretty).toBe(true);
    expect(loadConfig({ npm_lifecycle_event: 'dev', LOG_PRETTY: 'false' }).logPretty).toBe(false);
    expect(loadConfig({ npm_lifecycle_event: 'start' }).logPretty).toBe(false);
  });

  it('lets key holders introspect in upstream mode by default; GRAPHQL_INTROSPECTION overrides', () => {
    expect(loadConfig({}).introspection).toBe('all');
    expect(loadConfig(upstream).introspection).toBe('authenticated');
    expect(loadConfig({ ...upstream, GRAPHQL_INTROSPECTION: 'false' }).introspection).toBe('off');
    expect(loadConfig({ ...upstream, GRAPHQL_INTROSPECTION: 'true' }).introspection).toBe('all');
    expect(loadConfig({ GRAPHQL_INTROSPECTION: 'authenticated' }).introspection).toBe('authenticated');
  });

  it('refuses JWTs without exp unless GATEWAY_JWT_REQUIRE_EXP=false', () => {
    const jwt = { ...upstream, GATEWAY_JWT_JWKS_URL: 'https://issuer.example.com/jwks.json' };
    expect(loadConfig(jwt).jwt?.requireExp).toBe(true);
    expect(loadConfig({ ...jwt, GATEWAY_JWT_REQUIRE_EXP: 'false' }).jwt?.requireExp).toBe(false);
  });

  it('reports every problem at once', () => {
    const problems = problemsOf({
      PORT: 'x',
      UPSTREAM_TIMEOUT_MS: 'y',
      IDENTITY_BASE_URL: 'https://tenant.example.com',
      CONTENT_LIBRARY_USERNAME: 'reader',
      GATEWAY_API_KEYS: 'k',
    });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'CONTENT_LIBRARY_PASSWORD',
      'IDENTITY_CLIENT_ID',
      'IDENTITY_CLIENT_SECRET',
      'PORT',
      'UPSTREAM_TIMEOUT_MS',
    ]);
  });

  it('refuses upstream mode without caller authentication, unless anonymous callers are allowed', () => {
    const { GATEWAY_API_KEYS: _keys, ...noKeys } = upstream;
    expect(problemsOf(noKeys)).toEqual([expect.stringMatching(/^GATEWAY_API_KEYS: .*GATEWAY_ALLOW_ANONYMOUS=true/)]);
    expect(loadConfig({ ...noKeys, GATEWAY_ALLOW_ANONYMOUS: 'true' }).allowAnonymous).toBe(true);
    expect(loadConfig({ ...noKeys, GATEWAY_JWT_JWKS_URL: 'https://issuer.example.com/jwks.json' }).jwt).toEqual({
      jwksUrl: 'https://issuer.example.com/jwks.json',
      requireExp: true,
    });
  });

  it('never prints a secret, even when the variable around it is wrong', () => {
    const secrets = {
      IDENTITY_CLIENT_SECRET: 's3cr3t-client',
      CONTENT_LIBRARY_PASSWORD: 'p4ssw0rd-library',
      GATEWAY_API_KEYS: 'api-key-value',
      IDENTITY_BASE_URL: 'https://user:url-password@tenant example',
    };
    let message = '';
    try {
      loadConfig({ ...secrets, PORT: 'bad' });
    } catch (error) {
      message = String(error);
    }
    expect(message).toContain('PORT');
    for (const value of ['s3cr3t-client', 'p4ssw0rd-library', 'api-key-value', 'url-password']) {
      expect(message).not.toContain(value);
    }
  });

  it('reads the live audit settings and the demo event interval, with their defaults', () => {
    expect(loadConfig({})).toMatchObject({
      auditLive: { pollMs: 5000, giveUpMs: 60_000, maxSubscriptions: 1000, maxSubscriptionsPerCaller: undefined, maxFilters: 100 },
      demoEventIntervalMs: 3000,
    });
    const config = loadConfig({
      AUDIT_LIVE_POLL_MS: '250',
      AUDIT_LIVE_GIVE_UP_MS: '0',
      AUDIT_LIVE_MAX_SUBSCRIPTIONS: '5',
      AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER: '3',
      AUDIT_LIVE_MAX_FILTERS: '2',
      DEMO_EVENT_INTERVAL_MS: '0',
    });
    expect(config).toMatchObject({
      auditLive: { pollMs: 250, giveUpMs: 0, maxSubscriptions: 5, maxSubscriptionsPerCaller: 3, maxFilters: 2 },
      demoEventIntervalMs: 0,
    });
    expect(
      problemsOf({ AUDIT_LIVE_POLL_MS: '0', AUDIT_LIVE_MAX_SUBSCRIPTIONS: 'many', AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER: '0', DEMO_EVENT_INTERVAL_MS: '-1' }),
    ).toEqual([
      'AUDIT_LIVE_POLL_MS: must be a whole number from 10 to 3600000',
      'AUDIT_LIVE_MAX_SUBSCRIPTIONS: must be a whole number from 0 to 1000000',
      'AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER: must be a whole number from 1 to 1000000',
      'DEMO_EVENT_INTERVAL_MS: must be a whole number from 0 to 3600000',
    ]);
  });
});
