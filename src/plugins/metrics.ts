/**
 * Prometheus metrics at /metrics: GraphQL operations (the Yoga plugin), upstream calls by
 * service, route and status, credential renewals and cache lookups. One registry per gateway instance.
 */
import { usePrometheus } from '@graphql-yoga/plugin-prometheus';
import type { Plugin } from 'graphql-yoga';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { UpstreamEvents } from '../upstream/events.js';

export interface GatewayMetrics {
  readonly registry: Registry;
  /** Hand these to createUpstreams. */
  readonly upstreamEvents: UpstreamEvents;
  plugin(): Plugin;
}

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const upstreamDuration = new Histogram({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'Upstream calls, retries and credential waits included, by service, route, final status and outcome.',
    labelNames: ['service', 'route', 'status', 'outcome'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  const upstreamRetries = new Counter({
    name: 'gateway_upstream_retries_total',
    help: 'Transient retries of upstream calls (connection errors, 429, 502-504).',
    labelNames: ['service', 'route'] as const,
    registers: [registry],
  });
  const credentialRenewals = new Counter({
    name: 'gateway_credential_renewals_total',
    help: 'Token requests and session logins, by kind and outcome.',
    labelNames: ['service', 'kind', 'outcome'] as const,
    registers: [registry],
  });
  const cacheLookups = new Counter({
    name: 'gateway_cache_lookups_total',
    help: 'Cache lookups by cache and outcome (hit, miss, bypass: not cacheable).',
    labelNames: ['cache', 'outcome'] as const,
    registers: [registry],
  });

  return {
    registry,
    upstreamEvents: {
      onUpstreamCall(event) {
        const labels = { service: event.service, route: event.route };
        upstreamDuration.observe(
          { ...labels, status: String(event.status ?? 'none'), outcome: event.outcome },
          event.durationMs / 1000,
        );
        if (event.retries > 0) upstreamRetries.inc(labels, event.retries);
      },
      onCredentialRenewal(event) {
        credentialRenewals.inc({ service: event.service, kind: event.kind, outcome: event.outcome });
      },
      onCacheLookup(event) {
        cacheLookups.inc({ cache: event.cache, outcome: event.outcome });
      },
    },
    plugin: () =>
      usePrometheus({
        registry,
        endpoint: '/metrics',
        // Per-phase histograms and the deprecated-field counter (a document walk per request) are
        // left out: they cost more per request than they tell about this gateway.
        metrics: {
          graphql_envelop_request: true,
          graphql_envelop_request_duration: true,
          graphql_envelop_error_result: true,
          graphql_yoga_http_duration: true,
          graphql_envelop_phase_parse: false,
          graphql_envelop_phase_validate: false,
          graphql_envelop_phase_context: false,
          graphql_envelop_phase_execute: false,
          graphql_envelop_deprecated_field: false,
          graphql_envelop_schema_change: false,
          graphql_envelop_execute_resolver: false,
        },
        labels: { operationName: true, operationType: true },
      }),
  };
}
