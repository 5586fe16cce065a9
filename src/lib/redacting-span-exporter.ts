import type { SpanContext } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { redactPans } from './pan.ts';
import { redactCardData } from './redaction.ts';

/**
 * A span exporter that passes every span through the one card-data redaction before it leaves the
 * process (issue 10: "span attributes" among the outputs): the span name, status message, attribute
 * values and event names and attributes go through {@link redactCardData} / {@link redactPans}, so a
 * PAN set on a span by any code path (ours or a library's) is exported as BIN and last four.
 * A span with nothing to mask is exported as the same object; otherwise as an object whose prototype
 * is the original span (its methods and getters keep working) with the masked members shadowing it.
 */
export class RedactingSpanExporter implements SpanExporter {
  readonly #inner: SpanExporter;

  /** @param inner the exporter that sends the redacted spans (OTLP/HTTP in production). */
  constructor(inner: SpanExporter) {
    this.#inner = inner;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.#inner.export(spans.map(redactSpan), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * One span with card data masked: {@link RedactingSpanExporter}. Also its links' attributes, and no
 * W3C `tracestate` on the span or its links (vendor text from outside the gateway that no one
 * vouches for; issue 20 item 7: a PAN placed in a client's `tracestate` reached the collector).
 * @returns `span` itself when nothing needed masking.
 */
export function redactSpan(span: ReadableSpan): ReadableSpan {
  const name = redactPans(span.name);
  const attributes = redactCardData(span.attributes);
  const statusMessage = span.status.message === undefined ? undefined : redactPans(span.status.message);
  const events = span.events.map((event) => {
    const eventName = redactPans(event.name);
    const eventAttributes = event.attributes === undefined ? undefined : redactCardData(event.attributes);
    return eventName === event.name && eventAttributes === event.attributes
      ? event
      : { ...event, name: eventName, attributes: eventAttributes };
  });
  const eventsChanged = events.some((event, i) => event !== span.events[i]);
  const links = span.links.map((link) => {
    const linkAttributes = link.attributes === undefined ? undefined : redactCardData(link.attributes);
    return linkAttributes === link.attributes && link.context.traceState === undefined
      ? link
      : { ...link, context: withoutTraceState(link.context), attributes: linkAttributes };
  });
  const linksChanged = links.some((link, i) => link !== span.links[i]);
  const spanContext = span.spanContext();
  const parent = span.parentSpanContext;
  if (
    name === span.name &&
    attributes === span.attributes &&
    statusMessage === span.status.message &&
    !eventsChanged &&
    !linksChanged &&
    spanContext.traceState === undefined &&
    parent?.traceState === undefined
  ) {
    return span;
  }
  const plainContext = withoutTraceState(spanContext);
  return Object.create(span, {
    name: { value: name, enumerable: true },
    attributes: { value: attributes, enumerable: true },
    status: { value: { ...span.status, message: statusMessage }, enumerable: true },
    events: { value: events, enumerable: true },
    links: { value: links, enumerable: true },
    spanContext: { value: () => plainContext },
    parentSpanContext: { value: parent && withoutTraceState(parent), enumerable: true },
  }) as ReadableSpan;
}

/** `spanContext` without its `traceState` (the same object when it has none). */
function withoutTraceState(spanContext: SpanContext): SpanContext {
  if (spanContext.traceState === undefined) return spanContext;
  const { traceState: _dropped, ...rest } = spanContext;
  return rest;
}
