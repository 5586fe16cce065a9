import { z } from 'zod';
import {
  httpUrl,
  integer,
  keyValueList,
  onOff,
  optionalString,
  port,
  type SettingsSection,
} from './fields.ts';

/** Prometheus metrics of the gateway. */
export const metricsSettings = {
  title: 'Metrics',
  about: 'Prometheus metrics (GET /metrics) listen on their own port, never behind the public load balancer.',
  shape: {
    METRICS_PORT: port.default(9464).describe('Port of the metrics listener; 0 picks a free port.'),
    METRICS_HOST: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe(
        'Interface of the metrics listener (loopback whatever HOST says); 0.0.0.0 when Prometheus scrapes from another host or container.',
      ),
    METRICS_VAULT_LABELS: onOff.describe(
      'on: vault ids as the `vault` label of cardgraph_upstream_token_fetches_total; off (default): `all`.',
    ),
  },
} satisfies SettingsSection;

/**
 * The standard OpenTelemetry variables cardgraph reads (gateway and standalone sandbox alike;
 * OpenTelemetry specification, "SDK environment variables" and "OTLP exporter configuration").
 */
export const tracingSettings = {
  title: 'Traces',
  about: 'OpenTelemetry traces, OTLP over HTTP (standard OTEL_* variables); off while no endpoint is set.',
  shape: {
    OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl
      .optional()
      .describe('Base address of the collector; /v1/traces is appended.'),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl
      .optional()
      .describe('Full traces address, e.g. http://collector:4318/v1/traces; wins over the base address.'),
    OTEL_EXPORTER_OTLP_PROTOCOL: z
      .enum(['http/protobuf', 'http/json'])
      .optional()
      .describe('http/protobuf (default) | http/json.'),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z
      .enum(['http/protobuf', 'http/json'])
      .optional()
      .describe('The protocol for traces; wins over OTEL_EXPORTER_OTLP_PROTOCOL.'),
    OTEL_EXPORTER_OTLP_HEADERS: keyValueList.describe('Exporter request headers, key=value[,…].'),
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValueList.describe(
      'Exporter request headers for traces, key=value[,…]; added to OTEL_EXPORTER_OTLP_HEADERS.',
    ),
    OTEL_EXPORTER_OTLP_TIMEOUT: integer(1, 600_000, 10_000).describe('Export request timeout (ms).'),
    OTEL_SERVICE_NAME: optionalString.describe(
      'service.name resource attribute; cardgraph (the sandbox: cardgraph-sandbox) when unset.',
    ),
    OTEL_RESOURCE_ATTRIBUTES: keyValueList.describe(
      'Further resource attributes, key=value[,…] (e.g. deployment.environment.name=production).',
    ),
    OTEL_TRACES_SAMPLER: z
      .enum([
        'always_on',
        'always_off',
        'traceidratio',
        'parentbased_always_on',
        'parentbased_always_off',
        'parentbased_traceidratio',
      ])
      .default('parentbased_always_on')
      .describe(
        'always_on | always_off | traceidratio | parentbased_always_on | parentbased_always_off | parentbased_traceidratio.',
      ),
    OTEL_TRACES_SAMPLER_ARG: z.coerce
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe('Ratio of the traceidratio samplers, 0…1.'),
    OTEL_BSP_SCHEDULE_DELAY: integer(1, 600_000, 5_000).describe('Delay between two batch exports (ms).'),
    OTEL_TRUST_CLIENT_TRACE: onOff.describe(
      "on: a client's traceparent may continue a trace (its trace id and sampled flag; never its tracestate, and nothing of it is sent upstream); off (default): every request starts the gateway's own trace and OTEL_TRACES_SAMPLER decides.",
    ),
    OTEL_SDK_DISABLED: z
      .enum(['true', 'false'])
      .optional()
      .describe('true turns tracing off whatever else is set.'),
    OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none']).optional().describe('none turns tracing off too.'),
  },
} satisfies SettingsSection;

type MetricsEnv = z.output<z.ZodObject<typeof metricsSettings.shape>>;
type TracingEnv = z.output<z.ZodObject<typeof tracingSettings.shape>>;

/** The Prometheus listener. */
export interface MetricsConfig {
  /**
   * Port of the Prometheus listener (`GET /metrics`), kept apart from the public port so the load
   * balancer never exposes it; 0 picks a free port. `METRICS_PORT`, default 9464.
   */
  port: number;
  /**
   * Interface of the metrics listener; `METRICS_HOST`, default `127.0.0.1` (loopback: scrapes come
   * from the same host or a sidecar unless the operator says otherwise).
   */
  host: string;
  /** Vault ids as label values (`METRICS_VAULT_LABELS=on`); off by default: `all`. */
  vaultLabels: boolean;
}

/**
 * Trace export settings read from the standard OpenTelemetry variables. Tracing is on when
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set, unless
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 */
export interface TracingConfig {
  /** Full OTLP/HTTP traces address, e.g. `http://collector:4318/v1/traces`. */
  endpoint: string;
  /** `http/protobuf` (the specification's default) or `http/json`. */
  protocol: 'http/protobuf' | 'http/json';
  /** Extra request headers of the exporter (`OTEL_EXPORTER_OTLP[_TRACES]_HEADERS`, `k=v,…`). */
  headers: Record<string, string>;
  /** Export request timeout (ms). */
  timeoutMs: number;
  /** `service.name` resource attribute (`OTEL_SERVICE_NAME`, default `cardgraph`). */
  serviceName: string;
  /** Further resource attributes (`OTEL_RESOURCE_ATTRIBUTES`, `k=v,…`). */
  resourceAttributes: Record<string, string>;
  /** `OTEL_TRACES_SAMPLER`; default `parentbased_always_on`. */
  sampler:
    | 'always_on'
    | 'always_off'
    | 'traceidratio'
    | 'parentbased_always_on'
    | 'parentbased_always_off'
    | 'parentbased_traceidratio';
  /** Ratio of the `traceidratio` samplers (`OTEL_TRACES_SAMPLER_ARG`, 0…1, default 1). */
  samplerRatio: number;
  /** Delay between two batch exports (`OTEL_BSP_SCHEDULE_DELAY`, ms, default 5000). */
  scheduleDelayMs: number;
  /**
   * `OTEL_TRUST_CLIENT_TRACE=on`: a client's `traceparent` may continue a trace (its trace id and
   * sampled flag); off (default): the gateway starts its own trace and its sampler decides
   * (src/lib/tracing.ts `incomingTraceContext`).
   */
  trustClientTrace: boolean;
}

/** {@link MetricsConfig} from the parsed variables. */
export function metricsConfig(e: MetricsEnv): MetricsConfig {
  return { port: e.METRICS_PORT, host: e.METRICS_HOST, vaultLabels: e.METRICS_VAULT_LABELS === 'on' };
}

/**
 * The trace settings from the parsed `OTEL_*` variables; `{}` when tracing is off.
 * @param serviceName the `service.name` when `OTEL_SERVICE_NAME` is unset.
 */
export function tracingConfig(e: TracingEnv, serviceName: string): { tracing?: TracingConfig } {
  const endpoint =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (e.OTEL_EXPORTER_OTLP_ENDPOINT
      ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`
      : undefined);
  if (!endpoint || e.OTEL_SDK_DISABLED === 'true' || e.OTEL_TRACES_EXPORTER === 'none') return {};
  return {
    tracing: {
      endpoint,
      protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
      headers: { ...e.OTEL_EXPORTER_OTLP_HEADERS, ...e.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
      timeoutMs: e.OTEL_EXPORTER_OTLP_TIMEOUT,
      serviceName: e.OTEL_SERVICE_NAME ?? serviceName,
      resourceAttributes: e.OTEL_RESOURCE_ATTRIBUTES,
      sampler: e.OTEL_TRACES_SAMPLER,
      samplerRatio: e.OTEL_TRACES_SAMPLER_ARG,
      scheduleDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
      trustClientTrace: e.OTEL_TRUST_CLIENT_TRACE === 'on',
    },
  };
}
