import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
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
import type { TracingConfig } from '../config/index.ts';
import { context } from './otel-api.ts';
import { RedactingSpanExporter } from './redacting-span-exporter.ts';
import { redactCardData } from './redaction.ts';
import type { Tracing } from './tracing-handle.ts';

/**
 * The exporting {@link Tracing} of `config`: an OpenTelemetry SDK tracer provider (not registered
 * globally) with the configured sampler, a batch span processor and an OTLP/HTTP exporter
 * (protobuf or JSON) behind the card-data redaction; registers the AsyncLocalStorage context
 * manager once per process. Loaded by `createTracing` (src/lib/tracing.ts) only when `OTEL_*`
 * configure an exporter, so an untraced gateway never loads the SDK (issue 21 item 2).
 * @param serviceVersion `service.version` of the resource, when known.
 */
export function createExportingTracing(config: TracingConfig, serviceVersion?: string): Tracing {
  // Returns false when a context manager is already registered (another app of this process).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // Resource values leave with every export: the same masking as span attributes.
  const resourceAttributes = redactCardData({
    ...config.resourceAttributes,
    'service.name': config.serviceName,
    ...(serviceVersion ? { 'service.version': serviceVersion } : {}),
  });
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
    resource: defaultResource().merge(resourceFromAttributes(resourceAttributes)),
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
