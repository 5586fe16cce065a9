import type { Tracer } from '@opentelemetry/api';

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
