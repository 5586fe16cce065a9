import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { request } from 'undici';

// Telemetry the gateway exports, read as a collector or Prometheus reads it: metrics scrapes and an
// OTLP/HTTP trace receiver.

/** GETs `${metricsUrl}/metrics` and parses it with a real Prometheus text parser. */
export async function scrapeMetrics(
  metricsUrl: string,
): Promise<{ text: string; families: PrometheusFamily[]; samples: MetricSample[] }> {
  const response = await request(`${metricsUrl}/metrics`);
  if (response.statusCode !== 200) throw new Error(`metrics answered ${response.statusCode}`);
  const contentType = String(response.headers['content-type']);
  if (!contentType.startsWith('text/plain; version=0.0.4'))
    throw new Error(`unexpected content type ${contentType}`);
  const text = await response.body.text();
  return { text, families: parsePrometheusTextFormat(text), samples: samplesOf(text) };
}

/** One sample line of the exposition text: metric name, labels and value. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The samples of `text`, for values. The text is first checked by {@link scrapeMetrics}'s parser;
 * this reads values because that parser (1.1.1) merges labelled histogram series into one.
 */
export function samplesOf(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the first sample named `name` whose labels include `labels`; 0 when none. */
export function sampleValue(
  samples: MetricSample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  const match = samples.find(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return match?.value ?? 0;
}

/** The largest value of a family: of its samples, or of its `_count` samples for a histogram. */
export function largestValue(family: PrometheusFamily, samples: MetricSample[]): number {
  const name = family.type === 'HISTOGRAM' ? `${family.name}_count` : family.name;
  return Math.max(0, ...samples.filter((sample) => sample.name === name).map((sample) => sample.value));
}

/** One span as OTLP/HTTP JSON carries it (the fields the tests read). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  serviceName: string;
}

/** An OTLP/HTTP JSON trace receiver on a free loopback port (what a collector offers at `/v1/traces`). */
export interface OtlpReceiver {
  /** Base address for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  spans: ReceivedSpan[];
  /** Raw request bodies, for "no card data anywhere" checks. */
  bodies: string[];
  /** Bodies of `application/x-protobuf` exports (kept raw: strings are plain bytes in protobuf). */
  protobufBodies: Buffer[];
  close(): Promise<void>;
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
}

function anyValueOf(value: OtlpAnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(anyValueOf);
  return undefined;
}

function attributesOf(list: { key: string; value: OtlpAnyValue }[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, anyValueOf(value)]));
}

/** Starts an {@link OtlpReceiver} answering `POST /v1/traces` (JSON or protobuf encoding) with 200. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const protobufBodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (
        req.method === 'POST' &&
        req.url === '/v1/traces' &&
        req.headers['content-type'] === 'application/x-protobuf'
      ) {
        protobufBodies.push(Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !String(req.headers['content-type']).includes('json')
      ) {
        res.writeHead(415).end();
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      bodies.push(text);
      const body = JSON.parse(text) as {
        resourceSpans?: {
          resource?: { attributes?: { key: string; value: OtlpAnyValue }[] };
          scopeSpans?: {
            spans?: (Omit<ReceivedSpan, 'attributes' | 'serviceName'> & {
              attributes?: { key: string; value: OtlpAnyValue }[];
            })[];
          }[];
        }[];
      };
      for (const resource of body.resourceSpans ?? []) {
        const serviceName = String(attributesOf(resource.resource?.attributes)['service.name']);
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              serviceName,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    protobufBodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
