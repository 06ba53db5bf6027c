/**
 * Optional OpenTelemetry tracing through @envelop/opentelemetry: one span per GraphQL operation
 * (and per resolver when asked), exported over OTLP/HTTP. Variables and results stay out of the
 * spans: they may carry personal data from the audit log.
 */
import { useOpenTelemetry } from '@envelop/opentelemetry';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Plugin } from 'graphql-yoga';

export interface TracingOptions {
  readonly serviceName: string;
  /** OTLP/HTTP base URL, e.g. http://otel-collector:4318; spans go to <endpoint>/v1/traces. */
  readonly endpoint?: string | undefined;
  /** Tests hand in an in-memory exporter instead. */
  readonly exporter?: SpanExporter;
  readonly resolverSpans?: boolean;
}

export interface Tracing {
  plugin(): Plugin;
  shutdown(): Promise<void>;
}

export function createTracing(options: TracingOptions): Tracing {
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: `${options.endpoint}/v1/traces` });
  const provider = new NodeTracerProvider({
    resource: new Resource({ 'service.name': options.serviceName }),
    spanProcessors: [options.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter)],
  });
  return {
    plugin: () =>
      useOpenTelemetry(
        { resolvers: options.resolverSpans ?? false, variables: false, result: false, document: true },
        provider,
        undefined,
        undefined,
        options.serviceName,
      ) as Plugin,
    shutdown: () => provider.shutdown(),
  };
}
