/** Prometheus metrics at /metrics, one registry per gateway. No label takes values a caller controls without bound. */
import { timingSafeEqual } from 'node:crypto';
import { createCounter, createHistogram, usePrometheus, type FillLabelsFnParams } from '@graphql-yoga/plugin-prometheus';
import type { Plugin } from 'graphql-yoga';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CLIENT_ERROR_CODES } from '../../../lib/errors.js';
import { digest } from '../auth/caller-auth.js';
import type { LiveAuditEvents, LiveAuditStats } from '../../../audit/live/index.js';
import type { UpstreamEvents } from '../../../upstream/types.js';

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;
const HTTP_METHODS = new Set(['GET', 'POST', 'OPTIONS', 'HEAD', 'PUT', 'PATCH', 'DELETE']);
const OPERATION_TYPES = new Set(['query', 'mutation', 'subscription']);
const MAX_OPERATION_NAMES = 100;

export class OperationNameLabels {
  private readonly names = new Set<string>();
  constructor(private readonly max: number) {}
  label(name: string | undefined): string {
    if (!name) return 'anonymous';
    if (this.names.has(name)) return name;
    if (this.names.size >= this.max || !GRAPHQL_NAME.test(name)) return 'other';
    this.names.add(name);
    return name;
  }
}

type Phase = 'execute' | 'subscribe';
type ErrorPhase = 'parse' | 'validate' | 'context' | Phase;
type OperationLabel = 'operation_type' | 'operation_name';
type ErrorParams = FillLabelsFnParams & { error: unknown; errorPhase: ErrorPhase };
type HttpParams = FillLabelsFnParams & { request: Request; response: Response };

const bounded = (value: string | undefined, allowed: ReadonlySet<string>, fallback: string) =>
  value !== undefined && allowed.has(value) ? value : fallback;

/** The plugin counts one error per failed parse or validation, without the error itself. */
const PHASE_CODES: Partial<Record<ErrorPhase, string>> = {
  parse: 'GRAPHQL_PARSE_FAILED',
  validate: 'GRAPHQL_VALIDATION_FAILED',
};

/** envelop names an operation without a name `Anonymous`, Yoga leaves it undefined: one label for both. */
const ENVELOP_ANONYMOUS = 'Anonymous';

const TOKEN_REQUIRED = { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer' };

export function useMetricsToken(token: string): Plugin {
  const expected = digest(token);
  return {
    onRequest({ url, request, fetchAPI, endResponse }) {
      if (url.pathname !== '/metrics') return;
      const given = /^bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')?.[1];
      if (given !== undefined && timingSafeEqual(digest(given), expected)) return;
      endResponse(new fetchAPI.Response('A bearer token is required for /metrics.\n', { status: 401, headers: TOKEN_REQUIRED }));
    },
  };
}

export type GatewayMetrics = ReturnType<typeof createMetrics>;

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const operationNames = new OperationNameLabels(MAX_OPERATION_NAMES);
  const operationLabels = (params: { operationName?: string | undefined; operationType?: string | undefined }) => ({
    operation_type: bounded(params.operationType, OPERATION_TYPES, 'unknown'),
    operation_name: operationNames.label(params.operationName === ENVELOP_ANONYMOUS ? undefined : params.operationName),
  });
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter({ name, help, labelNames, registers: [registry] });
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });

  const upstreamDuration = new Histogram({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'Upstream calls, retries and credential waits included, by service, route, final status and outcome (success, the error code, or cancelled: the caller went away).',
    labelNames: ['service', 'route', 'status', 'outcome'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  const upstreamRetries = counter(
    'gateway_upstream_retries_total',
    'Transient retries of upstream calls (connection errors, 429, 502-504).',
    ['service', 'route'],
  );
  const credentialRenewals = counter(
    'gateway_credential_renewals_total',
    'Token requests and session logins, by kind and outcome.',
    ['service', 'kind', 'outcome'],
  );
  const answersRefused = counter(
    'gateway_upstream_answers_refused_total',
    'Upstream answers left unread, their calls failed with UPSTREAM_UNAVAILABLE, because their bytes would take the answer bytes being received and parsed past UPSTREAM_MAX_BYTES_IN_FLIGHT.',
    ['service', 'reason'],
  );
  for (const service of ['identity', 'content-library']) answersRefused.inc({ service, reason: 'bytes_in_flight' }, 0);
  const cacheLookups = counter(
    'gateway_cache_lookups_total',
    'Cache lookups by cache and outcome (hit, miss, bypass: not cacheable).',
    ['cache', 'outcome'],
  );
  const liveEnded = counter(
    'gateway_live_subscriptions_ended_total',
    'Live audit subscriptions ended, by reason: client, shutdown, or the error code that ended them (RATE_LIMITED: the client did not keep up).',
    ['reason'],
  );
  // Every reason but an upstream's code is there from the start, so that rates start at 0.
  for (const reason of ['client', 'shutdown', 'RATE_LIMITED']) liveEnded.inc({ reason }, 0);
  const liveDelivered = counter(
    'gateway_live_records_delivered_total',
    "Live audit records handed to subscribers' clients, one per record and subscriber.",
  );

  const OPERATION = ['operation_type', 'operation_name'] as const;
  const perOperation = { phases: ['execute', 'subscribe'] as [Phase, Phase], fillLabelsFn: operationLabels };
  const operationMetrics = (clientErrorCode: (error: unknown) => string | undefined) => ({
    graphql_envelop_request: createCounter<Phase, OperationLabel>({
      registry,
      counter: {
        name: 'graphql_envelop_request_total',
        help: 'GraphQL operations executed, by type and name.',
        labelNames: OPERATION,
      },
      ...perOperation,
    }),
    graphql_envelop_request_duration: createHistogram<Phase, OperationLabel>({
      registry,
      histogram: {
        name: 'graphql_envelop_request_duration_seconds',
        help: 'Time to execute a GraphQL operation, by type and name.',
        labelNames: OPERATION,
        buckets: SECONDS_BUCKETS,
      },
      ...perOperation,
    }),
    graphql_envelop_error_result: createCounter<ErrorPhase, OperationLabel | 'phase' | 'code', ErrorParams>({
      registry,
      counter: {
        name: 'graphql_envelop_error_result_total',
        help: 'Errors in GraphQL results, by operation, phase and error code.',
        labelNames: [...OPERATION, 'phase', 'code'] as const,
      },
      phases: ['parse', 'validate', 'context', 'execute', 'subscribe'],
      fillLabelsFn: (params) => ({
        ...operationLabels(params),
        phase: params.errorPhase ?? 'unknown',
        code: bounded(PHASE_CODES[params.errorPhase] ?? clientErrorCode(params.error), CLIENT_ERROR_CODES, 'other'),
      }),
    }),
    graphql_yoga_http_duration: createHistogram<'request', OperationLabel | 'method' | 'status_code', HttpParams>({
      registry,
      histogram: {
        name: 'graphql_yoga_http_duration_seconds',
        help: 'Time to answer a GraphQL HTTP request, by method, status and operation.',
        labelNames: ['method', 'status_code', 'operation_type', 'operation_name'] as const,
        buckets: SECONDS_BUCKETS,
      },
      phases: ['request'],
      fillLabelsFn: (params) => ({
        ...operationLabels(params),
        method: bounded(params.request.method, HTTP_METHODS, 'other'),
        status_code: String(params.response.status),
      }),
    }),
  });

  const upstreamEvents: UpstreamEvents = {
    onUpstreamCall(event) {
      const labels = { service: event.service, route: event.route };
      const status = String(event.status ?? 'none');
      upstreamDuration.observe({ ...labels, status, outcome: event.outcome }, event.durationMs / 1000);
      if (event.retries > 0) upstreamRetries.inc(labels, event.retries);
    },
    onCredentialRenewal: ({ service, kind, outcome }) => credentialRenewals.inc({ service, kind, outcome }),
    onCacheLookup: (event) => cacheLookups.inc({ cache: event.cache, outcome: event.outcome }),
    onAnswerRefused: (event) => answersRefused.inc({ service: event.service, reason: event.reason }),
  };
  const liveAuditEvents: LiveAuditEvents = {
    onRecordDelivered: () => liveDelivered.inc(),
    onSubscriptionEnd: (reason) => liveEnded.inc({ reason }),
  };
  return {
    registry,
    upstreamEvents,
    liveAuditEvents,
    observeLiveAudit(live: { stats(): LiveAuditStats }) {
      gauge('gateway_live_subscriptions', 'Open live audit subscriptions (SSE and WebSocket).', () => live.stats().subscriptions);
      gauge(
        'gateway_live_pollers',
        'Live audit pollers: distinct filters being polled, each one upstream call per poll interval.',
        () => live.stats().pollers.length,
      );
    },
    observeSharedStore(store: { isUp(): boolean }) {
      gauge(
        'gateway_redis_up',
        'Whether Redis (REDIS_URL), where replicas share state, answers: 1 yes, 0 no (each replica then works on its own).',
        () => (store.isUp() ? 1 : 0),
      );
    },
    /** clientErrorCode: the code a client sees for an error (most reach the plugin before they are masked). */
    plugin: ({ clientErrorCode }: { clientErrorCode: (error: unknown) => string | undefined }): Plugin =>
      usePrometheus({
        registry,
        endpoint: '/metrics',
        // Per-phase histograms and the deprecated-field counter (a walk per request) cost more than they tell.
        metrics: {
          ...operationMetrics(clientErrorCode),
          graphql_envelop_request_time_summary: false,
          graphql_envelop_phase_parse: false,
          graphql_envelop_phase_validate: false,
          graphql_envelop_phase_context: false,
          graphql_envelop_phase_execute: false,
          graphql_envelop_phase_subscribe: false,
          graphql_envelop_deprecated_field: false,
          graphql_envelop_schema_change: false,
        },
      }),
  };
}
