/**
 * Traces that join the caller's: the gateway process (its production build) with OTEL_EXPORTER_OTLP_ENDPOINT
 * pointing at an in-process OTLP/HTTP receiver, in upstream mode against the simulator with API-key
 * auth on. Checks what a collector would receive and what the log lines on stdout carry.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { DEMO_CLIENT, DEMO_USER, MISSING_SESSION_ID, startSimulator, type Simulator } from '../../simulator/index.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { builtGateway } from '../helpers/built-gateway.js';
import { runGateway, type GatewayProcess } from '../helpers/process.js';
import { simulatorEnv } from '../helpers/simulator-env.js';

const API_KEY = 'tracing-test-key-0123456789';

let sim: Simulator;
let receiver: OtlpReceiver;
let gateway: GatewayProcess;
let url: string;

beforeAll(async () => {
  [sim, receiver] = await Promise.all([startSimulator(), startOtlpReceiver()]);
  gateway = runGateway({
    ...simulatorEnv(sim),
    GATEWAY_API_KEYS: API_KEY,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'gateway-under-test',
    // The batch processor's delay (default 5 s), so spans arrive while the test waits.
    OTEL_BSP_SCHEDULE_DELAY: '50',
    LOG_LEVEL: 'debug',
  }, await builtGateway());
  url = await gateway.ready;
}, 60_000);

afterAll(async () => {
  await gateway?.stop('SIGKILL');
  await Promise.all([receiver?.close(), sim?.close()]);
});

/** A caller's W3C trace context, as a router would send it. */
function callerContext() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

async function post(query: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, ...headers },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data?: any; errors?: { extensions?: { code?: string } }[] };
}

const operationSpan = (name: string) => receiver.waitFor((s) => s.attributes['graphql.execute.operationName'] === name);
const childOf = (parent: ReceivedSpan, name: string) =>
  receiver.waitFor((s) => s.parentSpanId === parent.spanId && s.name === name);
const stdoutLines = () =>
  gateway
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('tracing through the gateway process', { timeout: 30_000 }, () => {
  it("continues the caller's trace: same trace id, the caller's span as parent, upstream calls as children", async () => {
    const caller = callerContext();
    const { errors } = await post('query TracedAudit { auditEvents(first: 2) { edges { cursor } } }', {
      traceparent: caller.traceparent,
    });
    expect(errors).toBeUndefined();

    const operation = await operationSpan('TracedAudit');
    expect(operation).toMatchObject({ traceId: caller.traceId, parentSpanId: caller.spanId, kind: 2 });
    expect(operation.serviceName).toBe('gateway-under-test');

    const audit = await childOf(operation, 'GET audit-report');
    expect(audit).toMatchObject({ traceId: caller.traceId, kind: 3 });
    expect(audit.attributes).toMatchObject({
      'http.request.method': 'GET',
      'upstream.service': 'identity',
      'upstream.route': 'audit-report',
      'http.response.status_code': 200,
      'upstream.retries': 0,
      'upstream.outcome': 'success',
    });
    expect(audit.endNs).toBeGreaterThan(audit.startNs);
    expect(audit.attributes['upstream.duration_ms']).toBeTypeOf('number');
    // The first call needed a token: the renewal is a span inside the call that waited for it.
    const token = await childOf(audit, 'POST token');
    expect(token.attributes).toMatchObject({ 'upstream.route': 'token', 'http.response.status_code': 200 });
  });

  it("continues the caller's trace over a WebSocket, from the connection params", async () => {
    const caller = callerContext();
    const client = createClient({
      url: `${url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': API_KEY, traceparent: caller.traceparent },
      retryAttempts: 0,
    });
    try {
      const iterator = client.iterate({ query: 'query TracedOverWebSocket { auditEvents(first: 1) { edges { cursor } } }' });
      const { value } = await iterator.next();
      expect(value?.errors).toBeUndefined();
      await iterator.return?.();
    } finally {
      await client.dispose();
    }
    const operation = await operationSpan('TracedOverWebSocket');
    expect(operation).toMatchObject({ traceId: caller.traceId, parentSpanId: caller.spanId });
    expect(await childOf(operation, 'GET audit-report')).toMatchObject({ traceId: caller.traceId });
  });

  it('records retries and the final status on the upstream span', async () => {
    const caller = callerContext();
    sim.control.failNext(1, 503, { route: 'audit' });
    await post('query RetriedAudit { auditEvents(first: 1, filter: { objectType: "Group" }) { edges { cursor } } }', {
      traceparent: caller.traceparent,
    });
    const operation = await operationSpan('RetriedAudit');
    const audit = await childOf(operation, 'GET audit-report');
    expect(audit.attributes).toMatchObject({ 'upstream.retries': 1, 'http.response.status_code': 200, 'upstream.outcome': 'success' });
    expect(audit.status.code ?? 0).not.toBe(2);
  });

  it('marks a failed upstream call as an error, and a missing session as an ordinary answer', async () => {
    sim.control.malformNext('files', 1, { kind: 'shape' });
    const [bad, missing] = await Promise.all([
      post(`query BadFiles { updateSessionFiles(updateSessionId: "${sim.control.sessions()[0]!.id}") { name } }`),
      post(`query MissingFiles { updateSessionFiles(updateSessionId: "${MISSING_SESSION_ID}") { name } }`),
    ]);
    expect(bad.errors?.[0]?.extensions?.code).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    const badCall = await childOf(await operationSpan('BadFiles'), 'GET update-session-files');
    expect(badCall.status.code).toBe(2);
    expect(badCall.attributes).toMatchObject({ 'error.type': 'UPSTREAM_INVALID_RESPONSE', 'upstream.service': 'content-library' });
    const missingCall = await childOf(await operationSpan('MissingFiles'), 'GET update-session-files');
    expect(missingCall.attributes).toMatchObject({ 'http.response.status_code': 404, 'upstream.outcome': 'NOT_FOUND' });
    expect(missingCall.status.code ?? 0).not.toBe(2);
  });

  it('starts a new trace when the caller sends none, or one that is not W3C trace context', async () => {
    const unusable = ['', 'not-a-trace', `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`, `00-${'a'.repeat(5000)}`];
    for (const [i, traceparent] of unusable.entries()) {
      const { errors } = await post(`query Untraced${i} { auditEvents(first: 1) { edges { cursor } } }`, traceparent ? { traceparent } : {});
      expect(errors).toBeUndefined();
      const operation = await operationSpan(`Untraced${i}`);
      expect(operation.parentSpanId).toBeUndefined();
      expect(operation.traceId).toMatch(/^(?!0+$)[0-9a-f]{32}$/);
      expect((await childOf(operation, 'GET audit-report')).traceId).toBe(operation.traceId);
    }
  });

  it('puts trace_id and span_id on the log lines written within a span, and only there', async () => {
    const caller = callerContext();
    await post('query LoggedAudit { auditEvents(first: 1, filter: { objectType: "User" }) { edges { cursor } } }', {
      traceparent: caller.traceparent,
    });
    const audit = await childOf(await operationSpan('LoggedAudit'), 'GET audit-report');
    // The span can reach the receiver before the log line crosses the stdout pipe.
    const callLine = await vi.waitFor(() => {
      const line = stdoutLines().find((l) => l.msg === 'upstream call' && l.trace_id === caller.traceId);
      expect(line).toBeDefined();
      return line;
    });
    expect(callLine).toMatchObject({ route: 'audit-report', span_id: audit.spanId });
    const lines = stdoutLines();
    const readyLine = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('Gateway ready'));
    expect(readyLine).toBeDefined();
    expect(readyLine).not.toHaveProperty('trace_id');
  });

  it('puts no credential, token or query string in any span attribute', () => {
    const spans = receiver.spans();
    expect(spans.filter((s) => s.name.startsWith('GET ') || s.name.startsWith('POST ')).length).toBeGreaterThan(3);
    const values = spans.flatMap((s) => [s.name, ...Object.values(s.attributes).map(String)]);
    const secrets = [API_KEY, DEMO_CLIENT.secret, DEMO_USER.password, 'Bearer ', 'Basic ', 'eyJ', 'grant_type', 'fromMillis'];
    for (const value of values) {
      for (const secret of secrets) expect(value).not.toContain(secret);
      // Upstream paths with their query strings never appear; the operation document may.
      expect(value).not.toMatch(/\?[a-z_]+=/i);
    }
  });
});
