/**
 * The upstream layer wired to a fresh simulator over real HTTP, without the GraphQL layer.
 * Logs go to memory; credentials seen on the wire are collected so tests can assert that
 * none of them ever reaches a log line.
 */
import type { Dispatcher } from 'undici';
import { afterEach, expect } from 'vitest';
import { loadConfig, type Config } from '../../src/lib/config.js';
import { createLogger, type Logger } from '../../src/lib/logger.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../simulator/index.js';
import { createUpstreams, type GatewayUpstreams, type UpstreamOptions } from '../../src/upstream/index.js';
import type { CallOptions, CredentialRenewalEvent, UpstreamCallEvent } from '../../src/upstream/types.js';
import { MemoryLog } from './memory-log.js';
import { simulatorEnv } from './simulator-env.js';

export interface UpstreamHarness {
  readonly sim: Simulator;
  readonly config: Config;
  readonly upstreams: GatewayUpstreams;
  readonly log: Logger;
  /** Per-call options as the loaders pass them: a request-scoped child logger. */
  readonly call: CallOptions;
  readonly memory: MemoryLog;
  readonly calls: UpstreamCallEvent[];
  readonly renewals: CredentialRenewalEvent[];
  /** Configured secrets plus every token and session id the upstreams handed out. */
  secrets(): string[];
  /** Every successful token answer the upstreams received, oldest first. */
  tokenAnswers(): TokenAnswerSeen[];
  /** Log lines of one route, e.g. 'audit-report'. */
  callLines(route: string): Record<string, any>[];
  /** A new set of upstream clients (cold: no token, no session) on the same simulator and log. */
  recreate(options?: UpstreamOptions): GatewayUpstreams;
  close(): Promise<void>;
}

export interface TokenAnswerSeen {
  readonly access_token: string;
  readonly refresh_token?: string;
}

export interface HarnessOptions {
  simulator?: SimulatorOptions;
  env?: Record<string, string | undefined>;
  upstream?: UpstreamOptions;
}

export const HOUR = 3_600_000;

export async function startUpstreamHarness(options: HarnessOptions = {}): Promise<UpstreamHarness> {
  const sim = await startSimulator({ host: '127.0.0.1', eventCount: 400, ...options.simulator });
  const env: Record<string, string | undefined> = {
    ...simulatorEnv(sim),
    GATEWAY_ALLOW_ANONYMOUS: 'true',
    UPSTREAM_TIMEOUT_MS: '3000',
    LOG_LEVEL: 'debug',
    ...options.env,
  };
  const config = loadConfig(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)));
  const memory = new MemoryLog();
  const log = createLogger({ level: 'debug', destination: memory });
  const calls: UpstreamCallEvent[] = [];
  const renewals: CredentialRenewalEvent[] = [];
  const wireSecrets = new Set<string>();
  const tokenAnswers: TokenAnswerSeen[] = [];

  const build = (upstream: UpstreamOptions = {}) =>
    createUpstreams(config, {
      ...upstream,
      interceptors: [captureCredentials(wireSecrets, tokenAnswers), ...(upstream.interceptors ?? [])],
      events: {
        onUpstreamCall: (event) => calls.push(event),
        onCredentialRenewal: (event) => renewals.push(event),
      },
    });
  const all: GatewayUpstreams[] = [build(options.upstream)];

  return {
    sim,
    config,
    upstreams: all[0]!,
    log,
    call: { log: log.child({ requestId: 'req-test' }) },
    memory,
    calls,
    renewals,
    secrets() {
      const configured = [
        config.identity?.clientSecret,
        config.contentLibrary?.credentials?.password,
        config.identity && basic(config.identity.clientId, config.identity.clientSecret),
        config.contentLibrary?.credentials &&
          basic(config.contentLibrary.credentials.username, config.contentLibrary.credentials.password),
      ];
      return [...configured.filter((s): s is string => !!s), ...wireSecrets];
    },
    tokenAnswers: () => [...tokenAnswers],
    callLines: (route) => memory.lines().filter((line) => line.route === route && 'durationMs' in line),
    recreate(upstream) {
      const fresh = build(upstream);
      all.push(fresh);
      return fresh;
    },
    async close() {
      await Promise.all(all.map((u) => u.close()));
      await sim.close();
    },
  };
}

const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');

/** Watches answers of the token and session routes and keeps the credentials they carry. */
function captureCredentials(into: Set<string>, tokenAnswers: TokenAnswerSeen[]): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    if (!/oauthtoken|cis\/session/.test(opts.path)) return dispatch(opts, handler);
    const chunks: Buffer[] = [];
    return dispatch(opts, {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onResponseStart: (controller, status, headers, message) =>
        handler.onResponseStart?.(controller, status, headers, message),
      onResponseData: (controller, chunk) => {
        chunks.push(chunk);
        handler.onResponseData?.(controller, chunk);
      },
      onResponseEnd: (controller, trailers) => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
          for (const key of ['access_token', 'refresh_token', 'value']) {
            const value = body[key];
            if (typeof value === 'string') into.add(value);
          }
          if (typeof body.access_token === 'string') tokenAnswers.push(body as unknown as TokenAnswerSeen);
        } catch {
          // not JSON: nothing to collect
        }
        handler.onResponseEnd?.(controller, trailers);
      },
      onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
    });
  };
}

/** Asserts no secret appears anywhere in the captured log text. Returns how many were checked. */
/**
 * After each test, the harness it started (read with `current`, then cleared with `forget`) must
 * have no secret in its log, and is closed.
 */
export function closeAfterEachTest(current: () => UpstreamHarness | undefined, forget: () => void): void {
  afterEach(async () => {
    const harness = current();
    forget();
    if (!harness) return;
    expect(findLeakedSecrets(harness)).toEqual([]);
    await harness.close();
  });
}

export function findLeakedSecrets(harness: UpstreamHarness): string[] {
  const text = harness.memory.text();
  return harness.secrets().filter((secret) => secret.length >= 6 && text.includes(secret));
}

/** The audit window the simulator seeds (72 h before start), as a query. */
export function fullWindow(pageSize = 50, startIndex = 0) {
  const now = Date.now();
  return { fromMillis: now - 72 * HOUR - 60_000, toMillis: now + 60_000, pageSize, startIndex };
}

export async function timed<T>(promise: Promise<T>): Promise<{ value?: T; error?: any; ms: number }> {
  const started = performance.now();
  try {
    const value = await promise;
    return { value, ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
}
