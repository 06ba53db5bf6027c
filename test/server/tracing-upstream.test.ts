/**
 * The trace context travels on to the upstreams: each upstream request carries a `traceparent`
 * naming its own client span, so an upstream with tracing of its own joins the caller's trace.
 * Without tracing configured nothing is added, to the wire or to the log lines.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTracing } from '../../src/gateway/plugins/observability/tracing.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`;

/** Keeps the traceparent header of each upstream request, by path without query. */
function watchTraceparents(into: { path: string; traceparent: string | undefined }[]): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => {
    const headers = (options.headers ?? {}) as Record<string, string | undefined>;
    into.push({ path: options.path.split('?')[0]!, traceparent: headers.traceparent });
    return dispatch(options, handler);
  };
}

const AUDIT_QUERY = 'query Audited { auditEvents(first: 1) { edges { cursor } } }';

describe('trace context sent upstream', () => {
  const exporter = new InMemorySpanExporter();
  const tracing = createTracing({ serviceName: 'gateway-under-test', exporter });
  const sent: { path: string; traceparent: string | undefined }[] = [];
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ gateway: { tracing }, upstream: { interceptors: [watchTraceparents(sent)] } });
  });
  afterAll(async () => {
    await gateway.close();
    await tracing.shutdown();
  });

  it("names each upstream call's own span, in the caller's trace", async () => {
    await gateway.execute(AUDIT_QUERY, {}, { traceparent: TRACEPARENT });
    const spans = exporter.getFinishedSpans();
    const audit = spans.find((s) => s.name === 'GET audit-report')!;
    const token = spans.find((s) => s.name === 'POST token')!;
    expect(audit.spanContext().traceId).toBe(TRACE_ID);

    const auditRequest = sent.find((r) => r.path.endsWith('/analytics/reports/audit/'));
    expect(auditRequest?.traceparent).toBe(`00-${TRACE_ID}-${audit.spanContext().spanId}-01`);
    const tokenRequest = sent.find((r) => r.path.includes('oauthtoken'));
    expect(tokenRequest?.traceparent).toBe(`00-${TRACE_ID}-${token.spanContext().spanId}-01`);
  });
});

describe('without tracing configured', () => {
  const sent: { path: string; traceparent: string | undefined }[] = [];
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ upstream: { interceptors: [watchTraceparents(sent)] } });
  });
  afterAll(() => gateway.close());

  it("sends no trace context upstream; only the access line names the caller's trace", async () => {
    const { errors } = await gateway.execute(AUDIT_QUERY, {}, { traceparent: TRACEPARENT });
    expect(errors).toBeUndefined();
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((r) => r.traceparent === undefined)).toBe(true);
    const lines = gateway.logText().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => 'trace_id' in line).map((line) => [line.msg, line.trace_id])).toEqual([['request', TRACE_ID]]);
    expect(lines.some((line) => 'span_id' in line)).toBe(false);
  });
});
