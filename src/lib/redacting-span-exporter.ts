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
 * One span with card data masked: {@link RedactingSpanExporter}.
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
  if (
    name === span.name &&
    attributes === span.attributes &&
    statusMessage === span.status.message &&
    !eventsChanged
  ) {
    return span;
  }
  return Object.create(span, {
    name: { value: name, enumerable: true },
    attributes: { value: attributes, enumerable: true },
    status: { value: { ...span.status, message: statusMessage }, enumerable: true },
    events: { value: events, enumerable: true },
  }) as ReadableSpan;
}
