/**
 * The OpenTelemetry API (`@opentelemetry/api`) as the gateway uses it: its CommonJS build, one copy
 * per process.
 *
 * The package ships a CommonJS and an ES module build. prom-client (CommonJS, loaded at every start
 * for the metrics) requires the CommonJS one; an `import` from an ES module would load the other, a
 * second copy of the same 51 modules (about 50 ms of cold start on a 2-core machine). Both copies
 * would work (the API keeps its global state under a process-wide symbol), so this is only the
 * cheaper of two correct ways: import values from here, and types from `@opentelemetry/api` itself.
 * The tracing SDK, loaded only when traces are exported, brings its own ES module imports.
 */
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';

const api = createRequire(import.meta.url)('@opentelemetry/api') as typeof OtelApi;

export const {
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} = api;
