import {
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ProxyTracerProvider,
  type Span,
  SpanStatusCode,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../config.ts';
import { redactPans } from './pan.ts';
import { RedactingSpanExporter } from './redacting-span-exporter.ts';

/**
 * OpenTelemetry tracing of one gateway: a tracer exporting over OTLP/HTTP (protobuf or JSON) when
 * configured, a no-op tracer otherwise. The tracer provider is not registered globally (several
 * apps may run in one test process); only the AsyncLocalStorage context manager is, once per process,
 * so a span started for a GraphQL operation is the parent of the upstream calls made while it runs.
 */
export interface Tracing {
  /** Whether spans are exported (`OTEL_*` configured). */
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** Exports every ended span now. */
  forceFlush(): Promise<void>;
  /** Exports what is pending and stops the exporter. Idempotent. */
  shutdown(): Promise<void>;
}

const propagator = new W3CTraceContextPropagator();

/** Builds the tracing of {@link Tracing} from `config` (undefined: off). */
export function createTracing(config: TracingConfig | undefined, serviceVersion?: string): Tracing {
  if (!config) {
    return {
      enabled: false,
      tracer: new ProxyTracerProvider().getTracer('cardgraph'),
      forceFlush: async () => {},
      shutdown: async () => {},
    };
  }
  // Returns false when a context manager is already registered (another app of this process).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporterOptions = {
    url: config.endpoint,
    headers: config.headers,
    timeoutMillis: config.timeoutMs,
  };
  // Every span leaves through the card-data redaction, whatever code set its attributes.
  const exporter = new RedactingSpanExporter(
    config.protocol === 'http/json'
      ? new OTLPJsonTraceExporter(exporterOptions)
      : new OTLPProtoTraceExporter(exporterOptions),
  );
  const provider = new TracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        ...config.resourceAttributes,
        'service.name': config.serviceName,
        ...(serviceVersion ? { 'service.version': serviceVersion } : {}),
      }),
    ),
    sampler: samplerOf(config),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.scheduleDelayMs })],
  });
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    tracer: provider.getTracer('cardgraph', serviceVersion),
    forceFlush: () => provider.forceFlush(),
    shutdown() {
      stopped ??= provider.shutdown();
      return stopped;
    },
  };
}

function samplerOf(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * The context carried by an incoming W3C `traceparent`/`tracestate` (Trace Context, W3C
 * Recommendation), on top of the active context; the active context when absent or malformed.
 */
export function extractTraceContext(headers: Record<string, string | string[] | undefined>): Context {
  return propagator.extract(context.active(), headers, defaultTextMapGetter);
}

/** Adds `traceparent` (and `tracestate`) of the active span to outgoing `headers`; none without one. */
export function injectTraceContext(headers: Record<string, string>): Record<string, string> {
  propagator.inject(context.active(), headers, defaultTextMapSetter);
  return headers;
}

/**
 * Marks `span` failed with `code` (an error code, never a message that may carry input) and ends
 * nothing; the caller ends the span.
 */
export function recordSpanFailure(span: Span, code: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: redactPans(code) });
  span.setAttribute('error.type', redactPans(code));
}
