import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { createTracing } from '../../src/gateway/plugins/observability/tracing.js';
import { SESSION_IDS } from '../../simulator/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** The value of one Prometheus sample, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((w) => line.includes(w))) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

describe('observability', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  const metrics = async () => (await gateway.fetch('/metrics')).text();

  it('moves /metrics with traffic: operations, upstream calls by route and status, credential renewals', async () => {
    const before = await metrics();
    for (let i = 0; i < 3; i++) {
      await gateway.execute('query Page { auditEvents(first: 3) { edges { cursor } } }');
    }
    await gateway.execute(`query Files { updateSessionFiles(updateSessionId: "${SESSION_IDS.ready}") { name } }`);
    gateway.sim.control.failNext(1, 503, { route: 'audit' });
    await gateway.execute('query Retried { auditEvents(first: 1, filter: { objectType: "Group" }) { edges { cursor } } }');
    const after = await metrics();

    const delta = (name: string, labels?: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('graphql_envelop_request_total', { operation_name: 'Page' })).toBe(3);
    expect(delta('gateway_upstream_request_duration_seconds_count', { service: 'identity', route: 'audit-report', status: '200' })).toBeGreaterThanOrEqual(4);
    expect(delta('gateway_upstream_request_duration_seconds_count', { service: 'content-library', route: 'update-session-files', status: '200' })).toBe(1);
    expect(delta('gateway_upstream_retries_total', { service: 'identity', route: 'audit-report' })).toBe(1);
    expect(sample(after, 'gateway_credential_renewals_total', { kind: 'client_credentials', outcome: 'success' })).toBe(1);
    expect(sample(after, 'gateway_credential_renewals_total', { kind: 'session_login', outcome: 'success' })).toBe(1);
  });

  it('honours a client x-request-id, echoes it, and puts it on every log line of the request', async () => {
    const response = await gateway.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'trace-abc.123' },
      body: JSON.stringify({ query: '{ auditEvents(first: 1) { edges { cursor } } }' }),
    });
    expect(response.headers.get('x-request-id')).toBe('trace-abc.123');
    const lines = gateway.logs().filter((l) => l.requestId === 'trace-abc.123');
    expect(lines.some((l) => l.route === 'audit-report' && l.status === 200)).toBe(true);
  });

  it('creates a request id when the client sends none or an unusable one', async () => {
    for (const headers of [{}, { 'x-request-id': 'bad id with spaces\n' }] as Record<string, string>[]) {
      const response = await gateway.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('OpenTelemetry tracing', () => {
  const exporter = new InMemorySpanExporter();
  const tracing = createTracing({ serviceName: 'gateway-under-test', exporter });
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ gateway: { tracing } });
  });
  afterAll(async () => {
    await gateway.close();
    await tracing.shutdown();
  });

  it('exports a span per operation, with its name and document but never its variables', async () => {
    await gateway.execute('query TracedPage($n: Int) { auditEvents(first: $n) { edges { cursor } } }', { n: 2 });
    const span = exporter.getFinishedSpans().find((s) => s.attributes['graphql.execute.operationName'] === 'TracedPage');
    expect(span).toBeDefined();
    expect(span!.attributes['graphql.execute.document']).toContain('auditEvents');
    expect(span!.attributes['graphql.execute.variables']).toBeUndefined();
    expect(span!.resource.attributes['service.name']).toBe('gateway-under-test');
  });
});

describe('readiness', () => {
  let ready = true;
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ gateway: { isReady: () => ready } });
  });
  afterAll(() => gateway.close());

  it('answers /readyz 503 while draining, and /healthz 200 all along', async () => {
    expect((await gateway.fetch('/readyz')).status).toBe(200);
    ready = false;
    expect((await gateway.fetch('/readyz')).status).toBe(503);
    expect((await gateway.fetch('/readyz?cache-buster=1')).status).toBe(503);
    expect((await gateway.fetch('/healthz')).status).toBe(200);
  });
});
