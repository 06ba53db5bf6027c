/** OpenTelemetry spans per operation and per upstream call over OTLP/HTTP; variables, results, credentials stay out. */
import { getCurrentOtelContext, setCurrentOtelContext, useOpenTelemetry } from '@envelop/opentelemetry';
import { context, propagation, SpanKind, SpanStatusCode, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Plugin } from 'graphql-yoga';
import type { Dispatcher } from 'undici';
import type { UpstreamCallEvent, UpstreamTracer } from '../../../upstream/types.js';

export type Tracing = ReturnType<typeof createTracing>;

/** Yoga's headers may be a ponyfill: not checked with instanceof. */
type RequestHeaders = Pick<Headers, 'get'>;

const headerGetter: TextMapGetter<RequestHeaders> = {
  // The W3C propagator reads its two headers by name and never lists them.
  keys: () => [],
  get: (headers, key) => headers.get(key) ?? undefined,
};

const SPAN_CONTENT = { resolvers: false, variables: false, result: false, document: true };

/** A missing session is an ordinary answer (logged at info), and a caller gone no failure of the call. */
const ordinaryOutcomes = new Set<UpstreamCallEvent['outcome']>(['success', 'NOT_FOUND', 'cancelled']);

function useTraceContext(): Plugin {
  const continueCallerTrace = (graphqlContext: unknown) => {
    const headers = (graphqlContext as { request?: { headers?: Partial<RequestHeaders> } }).request?.headers;
    if (typeof headers?.get !== 'function' || !headers.get('traceparent')) return;
    setCurrentOtelContext(graphqlContext, propagation.extract(getCurrentOtelContext(graphqlContext), headers, headerGetter));
  };
  return {
    onExecute: ({ args }) => continueCallerTrace(args.contextValue),
    onSubscribe: ({ args }) => continueCallerTrace(args.contextValue),
  };
}

function upstreamTracerFor(tracer: Tracer): UpstreamTracer {
  return {
    traceCall(start, call) {
      const attributes = {
        'http.request.method': start.method,
        'upstream.service': start.service,
        'upstream.route': start.route,
      };
      return tracer.startActiveSpan(`${start.method} ${start.route}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
        try {
          return await call((event) => {
            span.setAttributes({
              ...(event.status === undefined ? {} : { 'http.response.status_code': event.status }),
              'upstream.retries': event.retries,
              'upstream.credential_retry': event.credentialRetry,
              'upstream.duration_ms': event.durationMs,
              'upstream.outcome': event.outcome,
            });
            if (!ordinaryOutcomes.has(event.outcome)) {
              span.setAttribute('error.type', event.outcome);
              span.setStatus({ code: SpanStatusCode.ERROR, message: event.outcome });
            }
          });
        } finally {
          span.end();
        }
      });
    },
  };
}

/** The active span's context sent upstream, so an upstream's own spans show inside the gateway's. */
const propagateToUpstream: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  if (Object.keys(carrier).length === 0) return dispatch(options, handler);
  return dispatch({ ...options, headers: { ...(options.headers as Record<string, string>), ...carrier } }, handler);
};

/** `endpoint`: the OTLP/HTTP base URL; tests hand in an in-memory `exporter` instead. */
export function createTracing(options: { serviceName: string; endpoint?: string; exporter?: SpanExporter }) {
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: `${options.endpoint}/v1/traces` });
  const provider = new NodeTracerProvider({
    resource: new Resource({ 'service.name': options.serviceName }),
    spanProcessors: [options.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter)],
  });
  // The async-local context manager and the W3C propagator; a second registration keeps the first, its equal.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    plugin: (): Plugin => ({
      // Added right after this plugin, so the caller's context is in place before the span opens.
      onPluginInit: ({ addPlugin }) => {
        addPlugin(useTraceContext());
        addPlugin(useOpenTelemetry(SPAN_CONTENT, provider, undefined, undefined, options.serviceName) as Plugin);
      },
    }),
    upstreamTracer: upstreamTracerFor(provider.getTracer(options.serviceName)),
    upstreamInterceptor: propagateToUpstream,
    shutdown: () => provider.shutdown(),
  };
}
