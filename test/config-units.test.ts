/**
 * The edges of reading the environment (src/lib/config.ts): blank values, flags in each spelling,
 * lists with empty items, URLs by scheme and trailing slashes, the cross-variable rules and the
 * error a misconfigured start prints. The variables one by one: config.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/lib/config.js';
import { problemsOf } from './helpers/config-problems.js';

const upstream = {
  IDENTITY_BASE_URL: 'https://tenant.example.com',
  IDENTITY_CLIENT_ID: 'gateway',
  IDENTITY_CLIENT_SECRET: 'top-secret-value',
  GATEWAY_API_KEYS: 'key-one',
};


const MISSING_AUTH =
  'GATEWAY_API_KEYS: required in upstream mode, so that callers must authenticate ' +
  '(or set GATEWAY_JWT_JWKS_URL for JWT callers, or GATEWAY_ALLOW_ANONYMOUS=true to let anyone in)';

describe('reading values', () => {
  it('reads blank and whitespace-only values as unset: their defaults', () => {
    expect(loadConfig({ PORT: '', HOST: '   ', LOG_LEVEL: '\t', GATEWAY_API_KEYS: ' ', UPSTREAM_TIMEOUT_MS: '  ' })).toMatchObject({
      port: 4000,
      host: '0.0.0.0',
      logLevel: 'info',
      apiKeys: [],
      upstreamTimeoutMs: 10_000,
    });
  });

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('reads the flag value %j as %s', (value, expected) => {
    expect(loadConfig({ ...upstream, GATEWAY_ALLOW_ANONYMOUS: value }).allowAnonymous).toBe(expected);
    expect(loadConfig({ ...upstream, PERSISTED_OPERATIONS_FILE: 'ops.json', PERSISTED_OPERATIONS_ONLY: value }).persistedOperations).toEqual({
      file: 'ops.json',
      only: expected,
    });
    expect(loadConfig({ ...upstream, GATEWAY_JWT_JWKS_URL: 'https://issuer.test/jwks', GATEWAY_JWT_REQUIRE_EXP: value }).jwt?.requireExp).toBe(
      expected,
    );
    expect(loadConfig({ LOG_PRETTY: value }).logPretty).toBe(expected);
  });

  it('reads GRAPHQL_INTROSPECTION=1 and =0 as true and false', () => {
    expect(loadConfig({ ...upstream, GRAPHQL_INTROSPECTION: '1' }).introspection).toBe('all');
    expect(loadConfig({ GRAPHQL_INTROSPECTION: '0' }).introspection).toBe('off');
  });

  it('drops empty items of a list', () => {
    expect(loadConfig({ GATEWAY_API_KEYS: 'k1, ,k2,,', CORS_ORIGINS: ',https://a.test,' })).toMatchObject({
      apiKeys: ['k1', 'k2'],
      corsOrigins: ['https://a.test'],
    });
  });

  it('takes http and https URLs only, every trailing slash removed', () => {
    expect(loadConfig({ ...upstream, IDENTITY_BASE_URL: 'http://tenant.test:8080/base//' }).identity?.baseUrl).toBe(
      'http://tenant.test:8080/base',
    );
    expect(loadConfig({ ...upstream, IDENTITY_BASE_URL: 'HTTPS://tenant.test///' }).identity?.baseUrl).toBe('HTTPS://tenant.test');
    for (const url of ['xhttps://tenant.test', 'httpx://tenant.test', 'ws://tenant.test', 'shttp://tenant.test']) {
      expect(problemsOf({ ...upstream, IDENTITY_BASE_URL: url })).toEqual(['IDENTITY_BASE_URL: must be an absolute http(s) URL']);
    }
  });

  it('reads a content library without credentials, and with them', () => {
    const library = { ...upstream, CONTENT_LIBRARY_URL: 'https://vcenter.test/' };
    expect(loadConfig(library).contentLibrary).toEqual({ url: 'https://vcenter.test', vendor: 'vmware', credentials: undefined });
    expect(loadConfig({ ...library, CONTENT_LIBRARY_USERNAME: 'reader', CONTENT_LIBRARY_PASSWORD: ' pw ' }).contentLibrary?.credentials).toEqual({
      username: 'reader',
      password: ' pw ',
    });
  });

  it('reads the JWT issuer and audience, and the tracing endpoint with its service name', () => {
    expect(
      loadConfig({
        ...upstream,
        GATEWAY_JWT_JWKS_URL: 'https://issuer.test/jwks',
        GATEWAY_JWT_ISSUER: 'https://issuer.test',
        GATEWAY_JWT_AUDIENCE: 'gateway',
      }).jwt,
    ).toEqual({ jwksUrl: 'https://issuer.test/jwks', issuer: 'https://issuer.test', audience: 'gateway', requireExp: true });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      endpoint: 'http://collector:4318',
      serviceName: 'identity-content-gateway',
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'edge' }).tracing).toEqual({
      endpoint: 'http://collector:4318',
      serviceName: 'edge',
    });
    expect(loadConfig({}).tracing).toBeUndefined();
  });
});

describe('rules across variables', () => {
  it('requires caller authentication when only the content library is configured', () => {
    expect(problemsOf({ CONTENT_LIBRARY_URL: 'https://vcenter.test' })).toEqual([MISSING_AUTH]);
  });

  it('takes a list of blank keys as no keys', () => {
    expect(problemsOf({ ...upstream, GATEWAY_API_KEYS: ' , , ' })).toEqual([MISSING_AUTH]);
    expect(problemsOf({ ...upstream, GATEWAY_API_KEYS: ',' })).toEqual([MISSING_AUTH]);
    expect(loadConfig({ ...upstream, GATEWAY_API_KEYS: ',key,' }).apiKeys).toEqual(['key']);
  });

  it('takes GATEWAY_ALLOW_ANONYMOUS=1 in place of keys, and names only the flag when it is misspelt', () => {
    const { GATEWAY_API_KEYS: _keys, ...noKeys } = upstream;
    expect(loadConfig({ ...noKeys, GATEWAY_ALLOW_ANONYMOUS: '1' }).allowAnonymous).toBe(true);
    expect(problemsOf({ ...noKeys, GATEWAY_ALLOW_ANONYMOUS: 'false' })).toEqual([MISSING_AUTH]);
    expect(problemsOf({ ...noKeys, GATEWAY_ALLOW_ANONYMOUS: ' true ' })).toEqual(['GATEWAY_ALLOW_ANONYMOUS: must be true or false']);
  });

  it('takes a whitespace-only required variable as missing', () => {
    expect(problemsOf({ ...upstream, IDENTITY_CLIENT_ID: '   ' })).toEqual(['IDENTITY_CLIENT_ID: required when IDENTITY_BASE_URL is set']);
  });

  it('needs PERSISTED_OPERATIONS_FILE for PERSISTED_OPERATIONS_ONLY=1, and not for =0', () => {
    expect(problemsOf({ PERSISTED_OPERATIONS_ONLY: '1' })).toEqual(['PERSISTED_OPERATIONS_FILE: required when PERSISTED_OPERATIONS_ONLY is true']);
    expect(loadConfig({ PERSISTED_OPERATIONS_ONLY: '0' }).persistedOperations).toBeUndefined();
  });

  it('takes an upstream in-flight budget equal to the largest answer', () => {
    expect(loadConfig({ UPSTREAM_MAX_BODY_BYTES: '1048576', UPSTREAM_MAX_BYTES_IN_FLIGHT: '1048576' })).toMatchObject({
      upstreamMaxBodyBytes: 1048576,
      upstreamMaxBytesInFlight: 1048576,
    });
  });
});

it('prints every problem on a line of its own, under a heading, as a ConfigError: values first, then rules across variables', () => {
  let error: unknown;
  try {
    loadConfig({ PORT: 'x', LOG_LEVEL: 'loud', PERSISTED_OPERATIONS_ONLY: 'true' });
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).name).toBe('ConfigError');
  expect((error as Error).message).toBe(
    [
      'Invalid configuration:',
      '  - PORT: must be a whole number from 0 to 65535',
      '  - LOG_LEVEL: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"',
      '  - PERSISTED_OPERATIONS_FILE: required when PERSISTED_OPERATIONS_ONLY is true',
    ].join('\n'),
  );
});
