import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { RedactingSpanExporter, redactSpan } from '../../src/lib/redacting-span-exporter.ts';

const PAN = '4111111111111111';
const GLUED = `CRD${PAN}`;

function tracerWith(exporter: InMemorySpanExporter) {
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: new RedactingSpanExporter(exporter) })],
  });
  return { provider, tracer: provider.getTracer('test') };
}

describe('RedactingSpanExporter', () => {
  it('exports no PAN from a span name, attribute, status message or event, however it is written', async () => {
    const exported = new InMemorySpanExporter();
    const { provider, tracer } = tracerWith(exported);
    const span = tracer.startSpan(`lookup ${PAN}`, {
      attributes: { 'card.ref': GLUED, 'card.refs': [PAN, 'tok_4242'], 'card.number': 5105105105105100 },
    });
    span.addEvent('retry', { reason: `upstream echoed 5105-1051-0510-5100 for ${GLUED}` });
    span.setStatus({ code: SpanStatusCode.ERROR, message: `bad card ${PAN}` });
    const { traceId } = span.spanContext();
    span.end();
    await provider.forceFlush();

    const [out] = exported.getFinishedSpans();
    expect(out).toBeDefined();
    const text = JSON.stringify({
      name: out?.name,
      attributes: out?.attributes,
      status: out?.status,
      events: out?.events,
    });
    for (const digits of [PAN, '5105105105105100', '5105-1051-0510-5100']) expect(text).not.toContain(digits);
    expect(out?.name).toBe('lookup 411111******1111');
    expect(out?.attributes['card.ref']).toBe('CRD411111******1111');
    expect(out?.attributes['card.refs']).toEqual(['411111******1111', 'tok_4242']);
    expect(out?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'bad card 411111******1111' });
    // The redacted span still answers as the original: its context and timings come through.
    expect(out?.spanContext().traceId).toBe(traceId);
    expect(out?.ended).toBe(true);
    await provider.shutdown();
  });

  it('exports a span without card data as the same object', async () => {
    const exported = new InMemorySpanExporter();
    const { provider, tracer } = tracerWith(exported);
    tracer.startSpan('upstream GET /cards/{id}', { attributes: { 'http.response.status_code': 200 } }).end();
    await provider.forceFlush();
    const [out] = exported.getFinishedSpans();
    expect(out && redactSpan(out)).toBe(out);
    expect(out?.attributes).toEqual({ 'http.response.status_code': 200 });
    await provider.shutdown();
  });
});
