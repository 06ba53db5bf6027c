/**
 * Hive Gateway (the `hive-gateway` binary) in front of the gateway with API-key auth on, sending a
 * key of its own to the gateway (docs/routers/hive-gateway.router-key.config.ts, as the README shows).
 * Both trace; the gateway's spans are read from memory.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTracing } from '../../src/gateway/plugins/observability/tracing.js';
import { SESSION_IDS, UPDATE_SESSIONS } from '../../simulator/content-library-data.js';
import {
  ACROSS_ENTITIES,
  CONTENT_API_KEY,
  postTo,
  ROUTER_START_MS,
  runHiveGateway,
  startSubgraphs,
  type RouterProcess,
  type Subgraphs,
} from '../helpers/routers.js';

const gatewaySpans = new InMemorySpanExporter();
const tracing = createTracing({ serviceName: 'content-gateway', exporter: gatewaySpans });
let subgraphs: Subgraphs;
let router: RouterProcess;

beforeAll(async () => {
  subgraphs = await startSubgraphs({ tracing });
  router = await runHiveGateway({
    configPath: 'docs/routers/hive-gateway.router-key.config.ts',
    supergraphSdl: subgraphs.supergraphSdl,
    env: { CONTENT_GATEWAY_API_KEY: CONTENT_API_KEY },
    // Its tracing on, the router sends W3C trace context to its subgraphs. (Its own export is not
    // read here: hive-gateway loads the project's older OTLP exporter, which its SDK cannot drive.)
    openTelemetry: 'http://127.0.0.1:9/v1/traces',
  });
}, ROUTER_START_MS + 30_000);

afterAll(async () => {
  await router?.stop();
  await subgraphs?.close();
  await tracing.shutdown();
});

describe('Hive Gateway sending its own key', { timeout: 20_000 }, () => {
  it('answers across _entities and carries NOT_FOUND with its code and path', async () => {
    const { status, body } = await postTo(router.url, ACROSS_ENTITIES);
    expect(status).toBe(200);
    const readyFiles = UPDATE_SESSIONS.find((s) => s.id === SESSION_IDS.ready)!.files.map((f) => ({ name: f.name, status: f.status }));
    expect(body.data?.deployments).toEqual([
      { id: 'dep-1', session: { id: SESSION_IDS.ready, files: readyFiles } },
      { id: 'dep-2', session: null },
      { id: 'dep-3', session: null },
    ]);
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0]!.extensions?.code).toBe('NOT_FOUND');
    // Hive Gateway points at the field of the entity that failed, below the client's session.
    expect(body.errors![0]!.path?.slice(0, 3)).toEqual(['deployments', 1, 'session']);
  });

  it("continues the router's trace: the gateway's operation is a child of a router span", async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const callerSpanId = 'b7ad6b7169203331';
    const { body } = await postTo(router.url, ACROSS_ENTITIES, { traceparent: `00-${traceId}-${callerSpanId}-01` });
    expect(body.data?.deployments).toHaveLength(3);

    const spans = gatewaySpans.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const operation = spans.find((s) => s.name.startsWith('query'));
    expect(operation).toBeDefined();
    // The router injected its own span (its fetch from this subgraph), not the caller's header.
    const parentSpanId = operation!.parentSpanId;
    expect(parentSpanId).toMatch(/^[0-9a-f]{16}$/);
    expect(parentSpanId).not.toBe(callerSpanId);
    const upstream = spans.filter((s) => s.name === 'GET update-session-files');
    expect(upstream.length).toBeGreaterThan(0);
    expect(upstream.every((s) => s.parentSpanId === operation!.spanContext().spanId)).toBe(true);
  });

  it('is the one that authenticates: the gateway itself refuses a request without a key', async () => {
    const direct = await postTo(subgraphs.content.url, '{ _service { sdl } }');
    expect(direct.status).toBe(401);
    expect(direct.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
