import type { Context, Span, TextMapPropagator } from '@opentelemetry/api';
import type { TracingConfig } from '../config/index.ts';
import {
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
} from './otel-api.ts';
import { redactPans } from './pan.ts';
import type { Tracing } from './tracing-handle.ts';

export type { Tracing } from './tracing-handle.ts';

/**
 * The W3C Trace Context propagator, loaded with the SDK by the first {@link createTracing} that
 * exports. None before: with no tracing in the process there is no context manager and no recording
 * span, so there is no trace context to carry, and `@opentelemetry/core` stays unloaded.
 */
let propagator: TextMapPropagator | undefined;

/** The tracing of a gateway or sandbox without `OTEL_*` configuration: a no-op tracer, nothing exported. */
export const TRACING_OFF: Tracing = {
  enabled: false,
  tracer: new ProxyTracerProvider().getTracer('cardgraph'),
  forceFlush: async () => {},
  shutdown: async () => {},
};

/**
 * Builds the tracing of {@link Tracing} from `config` (undefined: {@link TRACING_OFF}). The
 * OpenTelemetry SDK and its OTLP exporters (src/lib/tracing-sdk.ts, about 300 modules) load only
 * when tracing is configured, so an untraced gateway starts without them (issue 21 item 2).
 */
export async function createTracing(
  config: TracingConfig | undefined,
  serviceVersion?: string,
): Promise<Tracing> {
  if (!config) return TRACING_OFF;
  const [{ createExportingTracing }, { W3CTraceContextPropagator }] = await Promise.all([
    import('./tracing-sdk.ts'),
    import('@opentelemetry/core'),
  ]);
  propagator ??= new W3CTraceContextPropagator();
  return createExportingTracing(config, serviceVersion);
}

/**
 * Set on the context of a request whose trace a client started (a trusted `traceparent`): its trace
 * id is the client's, so {@link injectTraceContext} sends nothing upstream under it.
 */
const CLIENT_TRACE = createContextKey('cardgraph client trace');

/**
 * The context carried by an incoming W3C `traceparent`/`tracestate` (Trace Context, W3C
 * Recommendation), on top of the active context; the active context when absent or malformed, or
 * while no tracing exports in this process ({@link propagator}). For a server that trusts its caller's trace: the standalone sandbox (the provider's stand-in,
 * called by the gateway). The gateway's public server uses {@link incomingTraceContext}.
 */
export function extractTraceContext(headers: Record<string, string | string[] | undefined>): Context {
  const active = context.active();
  return propagator ? propagator.extract(active, headers, defaultTextMapGetter) : active;
}

/**
 * The parent context of a gateway request span (issue 20 item 7). The gateway's sampling decision
 * is its own: unless `trustClientTrace` (`OTEL_TRUST_CLIENT_TRACE=on`), a client's `traceparent` is
 * ignored, so the request span is a root that the configured sampler decides on (a client's
 * `sampled=00` cannot switch tracing off, nor `01` force it on). When trusted, the client's
 * `traceparent` is continued (its trace id and sampled flag) but never its `tracestate` (vendor
 * data the gateway does not vouch for), and the context is marked so that no upstream call carries
 * the client's trace id ({@link injectTraceContext}). The root context while no tracing exports in
 * this process (a `traceparent` would parent only no-op spans).
 * @param headers the request's headers (Node's lowercase names).
 */
export function incomingTraceContext(
  headers: Record<string, string | string[] | undefined>,
  trustClientTrace: boolean,
): Context {
  // A request is a new unit of work: never a child of whatever context the connection carries
  // (AsyncLocalStorage may hand a keep-alive connection's next request an earlier request's span).
  if (!trustClientTrace || headers.traceparent === undefined || !propagator) return ROOT_CONTEXT;
  const extracted = propagator.extract(
    ROOT_CONTEXT,
    { traceparent: headers.traceparent },
    defaultTextMapGetter,
  );
  return trace.getSpanContext(extracted) ? extracted.setValue(CLIENT_TRACE, true) : ROOT_CONTEXT;
}

/**
 * Adds `traceparent` of the active span to outgoing upstream `headers`, so the provider's spans join
 * the gateway's trace. Never a `tracestate`, and nothing at all inside a trace a client started
 * (trusted `traceparent`, see {@link incomingTraceContext}): the provider never sees a client's trace
 * id or vendor state (issue 20 item 7).
 */
export function injectTraceContext(headers: Record<string, string>): Record<string, string> {
  const active = context.active();
  if (!propagator || active.getValue(CLIENT_TRACE) === true) return headers;
  const carrier: Record<string, string> = {};
  propagator.inject(active, carrier, defaultTextMapSetter);
  if (carrier.traceparent !== undefined) headers.traceparent = carrier.traceparent;
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
