import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Every gateway-made sample of a scrape (graphql_* and gateway_*), with what timing decides taken
 * out: a histogram's sum is shown as whether it is positive, its finite buckets as whether they
 * are cumulative up to the +Inf bucket (which must equal the count).
 */
function gatewaySamples(scrape: string): string[] {
  const lines = scrape.split('\n').filter((l) => /^(graphql_|gateway_)/.test(l));
  const out: string[] = [];
  const finiteBuckets = new Map<string, number[]>();
  for (const line of lines) {
    const [, series, value] = /^(.*) (\S+)$/.exec(line)!;
    const bucket = /^(\w+)_bucket\{le="([^"]+)",(.*)\}$/.exec(series!);
    if (bucket && bucket[2] !== '+Inf') {
      const key = `${bucket[1]}{${bucket[3]}}`;
      finiteBuckets.set(key, [...(finiteBuckets.get(key) ?? []), Number(value)]);
      continue;
    }
    if (bucket) {
      const key = `${bucket[1]}{${bucket[3]}}`;
      const counts = finiteBuckets.get(key) ?? [];
      const cumulative = counts.length === 12 && counts.every((c, i) => c >= (counts[i - 1] ?? 0) && c <= Number(value));
      out.push(`${key} buckets ${cumulative ? 'cumulative' : `broken ${counts.join(',')}`}, +Inf ${value}`);
      continue;
    }
    out.push(/_sum(\{|$)/.test(series!) ? `${series} ${Number(value) >= 0 ? 'non-negative' : value}` : line);
  }
  return out;
}

describe('the /metrics scrape after a mix of operations', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('has these series, counts and values', async () => {
    await gateway.execute('query Page { auditEvents(first: 2) { edges { cursor } } }');
    await gateway.execute('query Page { auditEvents(first: 2) { edges { cursor } } }');
    await gateway.execute('{ __typename }');
    await gateway.execute('query Broken {');
    await gateway.execute('query Unknown { nope }');
    await gateway.execute('query Negative { auditEvents(first: -1) { edges { cursor } } }');
    await gateway.execute('query Two { a: auditEvents(first: -1) { edges { cursor } } b: auditEvents(first: -2) { edges { cursor } } }');
    gateway.sim.control.failNext(1, 503, { route: 'audit' });
    await gateway.execute('query Retried { auditEvents(first: 1, filter: { objectType: "Group" }) { edges { cursor } } }');
    gateway.sim.control.failNext(5, 503, { route: 'audit' });
    await gateway.execute('query Unavailable { auditEvents(first: 1, filter: { objectType: "Group" }) { edges { cursor } } }');
    await gateway.fetch(`/graphql?query=${encodeURIComponent('query ViaGet { __typename }')}`, {
      headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' },
    });
    await gateway.execute('query Picked { __typename } query Other { __typename }');
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: 'query Picked { __typename } query Other { __typename }', operationName: 'Other' }),
    });
    expect(response.status).toBe(200);

    const scrape = await (await gateway.fetch('/metrics')).text();
    expect(gatewaySamples(scrape)).toEqual(EXPECTED);
  });
});

const EXPECTED: string[] = [
  'gateway_upstream_request_duration_seconds{service="identity",route="token",status="200",outcome="success"} buckets cumulative, +Inf 1',
  'gateway_upstream_request_duration_seconds_sum{service="identity",route="token",status="200",outcome="success"} non-negative',
  'gateway_upstream_request_duration_seconds_count{service="identity",route="token",status="200",outcome="success"} 1',
  'gateway_upstream_request_duration_seconds{service="identity",route="audit-report",status="200",outcome="success"} buckets cumulative, +Inf 3',
  'gateway_upstream_request_duration_seconds_sum{service="identity",route="audit-report",status="200",outcome="success"} non-negative',
  'gateway_upstream_request_duration_seconds_count{service="identity",route="audit-report",status="200",outcome="success"} 3',
  'gateway_upstream_request_duration_seconds{service="identity",route="audit-report",status="503",outcome="UPSTREAM_UNAVAILABLE"} buckets cumulative, +Inf 1',
  'gateway_upstream_request_duration_seconds_sum{service="identity",route="audit-report",status="503",outcome="UPSTREAM_UNAVAILABLE"} non-negative',
  'gateway_upstream_request_duration_seconds_count{service="identity",route="audit-report",status="503",outcome="UPSTREAM_UNAVAILABLE"} 1',
  'gateway_upstream_retries_total{service="identity",route="audit-report"} 5',
  'gateway_credential_renewals_total{service="identity",kind="client_credentials",outcome="success"} 1',
  'gateway_upstream_answers_refused_total{service="identity",reason="bytes_in_flight"} 0',
  'gateway_upstream_answers_refused_total{service="content-library",reason="bytes_in_flight"} 0',
  'gateway_cache_lookups_total{cache="audit-report",outcome="bypass"} 4',
  'gateway_live_subscriptions_ended_total{reason="client"} 0',
  'gateway_live_subscriptions_ended_total{reason="shutdown"} 0',
  'gateway_live_subscriptions_ended_total{reason="RATE_LIMITED"} 0',
  'gateway_live_records_delivered_total 0',
  'graphql_envelop_request_total{operation_type="query",operation_name="Page"} 2',
  'graphql_envelop_request_total{operation_type="query",operation_name="anonymous"} 1',
  'graphql_envelop_request_total{operation_type="query",operation_name="Negative"} 1',
  'graphql_envelop_request_total{operation_type="query",operation_name="Two"} 1',
  'graphql_envelop_request_total{operation_type="query",operation_name="Retried"} 1',
  'graphql_envelop_request_total{operation_type="query",operation_name="Unavailable"} 1',
  'graphql_envelop_request_total{operation_type="query",operation_name="ViaGet"} 1',
  'graphql_envelop_request_total{operation_type="query",operation_name="Other"} 1',
  'graphql_envelop_request_duration_seconds{operation_type="query",operation_name="Page"} buckets cumulative, +Inf 2',
  'graphql_envelop_request_duration_seconds_sum{operation_type="query",operation_name="Page"} non-negative',
  'graphql_envelop_request_duration_seconds_count{operation_type="query",operation_name="Page"} 2',
  'graphql_envelop_request_duration_seconds{operation_type="query",operation_name="anonymous"} buckets cumulative, +Inf 1',
  'graphql_envelop_request_duration_seconds_sum{operation_type="query",operation_name="anonymous"} non-negative',
  'graphql_envelop_request_duration_seconds_count{operation_type="query",operation_name="anonymous"} 1',
  'graphql_envelop_request_duration_seconds{operation_type="query",operation_name="Negative"} buckets cumulative, +Inf 1',
  'graphql_envelop_request_duration_seconds_sum{operation_type="query",operation_name="Negative"} non-negative',
  'graphql_envelop_request_duration_seconds_count{operation_type="query",operation_name="Negative"} 1',
  'graphql_envelop_request_duration_seconds{operation_type="query",operation_name="Two"} buckets cumulative, +Inf 1',
  'graphql_envelop_request_duration_seconds_sum{operation_type="query",operation_name="Two"} non-negative',
  'graphql_envelop_request_duration_seconds_count{operation_type="query",operation_name="Two"} 1',
  'graphql_envelop_request_duration_seconds{operation_type="query",operation_name="Retried"} buckets cumulative, +Inf 1',
  'graphql_envelop_request_duration_seconds_sum{operation_type="query",operation_name="Retried"} non-negative',
  'graphql_envelop_request_duration_seconds_count{operation_type="query",operation_name="Retried"} 1',
  'graphql_envelop_request_duration_seconds{operation_type="query",operation_name="Unavailable"} buckets cumulative, +Inf 1',
  'graphql_envelop_request_duration_seconds_sum{operation_type="query",operation_name="Unavailable"} non-negative',
  'graphql_envelop_request_duration_seconds_count{operation_type="query",operation_name="Unavailable"} 1',
  'graphql_envelop_request_duration_seconds{operation_type="query",operation_name="ViaGet"} buckets cumulative, +Inf 1',
  'graphql_envelop_request_duration_seconds_sum{operation_type="query",operation_name="ViaGet"} non-negative',
  'graphql_envelop_request_duration_seconds_count{operation_type="query",operation_name="ViaGet"} 1',
  'graphql_envelop_request_duration_seconds{operation_type="query",operation_name="Other"} buckets cumulative, +Inf 1',
  'graphql_envelop_request_duration_seconds_sum{operation_type="query",operation_name="Other"} non-negative',
  'graphql_envelop_request_duration_seconds_count{operation_type="query",operation_name="Other"} 1',
  'graphql_envelop_error_result_total{operation_type="unknown",operation_name="anonymous",phase="parse",code="GRAPHQL_PARSE_FAILED"} 1',
  'graphql_envelop_error_result_total{operation_type="query",operation_name="Unknown",phase="validate",code="GRAPHQL_VALIDATION_FAILED"} 1',
  'graphql_envelop_error_result_total{operation_type="query",operation_name="Negative",phase="execute",code="BAD_USER_INPUT"} 1',
  'graphql_envelop_error_result_total{operation_type="query",operation_name="Two",phase="execute",code="BAD_USER_INPUT"} 2',
  'graphql_envelop_error_result_total{operation_type="query",operation_name="Unavailable",phase="execute",code="UPSTREAM_UNAVAILABLE"} 1',
  'graphql_yoga_http_duration_seconds{operation_type="query",operation_name="Page",method="POST",status_code="200"} buckets cumulative, +Inf 2',
  'graphql_yoga_http_duration_seconds_sum{operation_type="query",operation_name="Page",method="POST",status_code="200"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="query",operation_name="Page",method="POST",status_code="200"} 2',
  'graphql_yoga_http_duration_seconds{operation_type="query",operation_name="anonymous",method="POST",status_code="200"} buckets cumulative, +Inf 1',
  'graphql_yoga_http_duration_seconds_sum{operation_type="query",operation_name="anonymous",method="POST",status_code="200"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="query",operation_name="anonymous",method="POST",status_code="200"} 1',
  'graphql_yoga_http_duration_seconds{operation_type="query",operation_name="Unknown",method="POST",status_code="200"} buckets cumulative, +Inf 1',
  'graphql_yoga_http_duration_seconds_sum{operation_type="query",operation_name="Unknown",method="POST",status_code="200"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="query",operation_name="Unknown",method="POST",status_code="200"} 1',
  'graphql_yoga_http_duration_seconds{operation_type="query",operation_name="Negative",method="POST",status_code="200"} buckets cumulative, +Inf 1',
  'graphql_yoga_http_duration_seconds_sum{operation_type="query",operation_name="Negative",method="POST",status_code="200"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="query",operation_name="Negative",method="POST",status_code="200"} 1',
  'graphql_yoga_http_duration_seconds{operation_type="query",operation_name="Two",method="POST",status_code="200"} buckets cumulative, +Inf 1',
  'graphql_yoga_http_duration_seconds_sum{operation_type="query",operation_name="Two",method="POST",status_code="200"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="query",operation_name="Two",method="POST",status_code="200"} 1',
  'graphql_yoga_http_duration_seconds{operation_type="query",operation_name="Retried",method="POST",status_code="200"} buckets cumulative, +Inf 1',
  'graphql_yoga_http_duration_seconds_sum{operation_type="query",operation_name="Retried",method="POST",status_code="200"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="query",operation_name="Retried",method="POST",status_code="200"} 1',
  'graphql_yoga_http_duration_seconds{operation_type="query",operation_name="Unavailable",method="POST",status_code="200"} buckets cumulative, +Inf 1',
  'graphql_yoga_http_duration_seconds_sum{operation_type="query",operation_name="Unavailable",method="POST",status_code="200"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="query",operation_name="Unavailable",method="POST",status_code="200"} 1',
  'graphql_yoga_http_duration_seconds{operation_type="query",operation_name="ViaGet",method="GET",status_code="200"} buckets cumulative, +Inf 1',
  'graphql_yoga_http_duration_seconds_sum{operation_type="query",operation_name="ViaGet",method="GET",status_code="200"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="query",operation_name="ViaGet",method="GET",status_code="200"} 1',
  'graphql_yoga_http_duration_seconds{operation_type="unknown",operation_name="anonymous",method="POST",status_code="400"} buckets cumulative, +Inf 1',
  'graphql_yoga_http_duration_seconds_sum{operation_type="unknown",operation_name="anonymous",method="POST",status_code="400"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="unknown",operation_name="anonymous",method="POST",status_code="400"} 1',
  'graphql_yoga_http_duration_seconds{operation_type="query",operation_name="Other",method="POST",status_code="200"} buckets cumulative, +Inf 1',
  'graphql_yoga_http_duration_seconds_sum{operation_type="query",operation_name="Other",method="POST",status_code="200"} non-negative',
  'graphql_yoga_http_duration_seconds_count{operation_type="query",operation_name="Other",method="POST",status_code="200"} 1',
];
