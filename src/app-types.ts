import type { DestinationStream } from 'pino';
import type { CardEventStream } from './events/card-event-stream.ts';
import type { NetworkTokenEventStream } from './events/network-token-event-stream.ts';
import type { Metrics } from './lib/metrics.ts';
import type { ReadinessReport } from './lib/readiness.ts';
import type { Tracing } from './lib/tracing.ts';

/** The shapes of a built gateway (src/app.ts `buildApp`), apart from the composition that makes it. */

/** Options for tests and embedding; production passes none. */
export interface AppOptions {
  /** Where the gateway's JSON log lines go (stdout by default). */
  logDestination?: DestinationStream;
  /** A tracer provider the caller owns and shuts down (src/dev.ts shares one with the sandbox). */
  tracing?: Tracing;
}

/** Addresses of a started app. */
export interface AppAddresses {
  /** Gateway base address, e.g. `http://127.0.0.1:4000`; GraphQL is at `${url}/graphql`. */
  url: string;
  /** Base address of the metrics listener; Prometheus text at `${metricsUrl}/metrics`. */
  metricsUrl: string;
}

/** A built gateway: {@link buildApp}. */
export interface App {
  /** Starts the upstream clients, the event streams and the servers. @throws Error when called twice. */
  start(): Promise<AppAddresses>;
  /** Graceful, bounded by `SHUTDOWN_TIMEOUT_MS` (src/lib/shutdown.ts). Idempotent. */
  stop(): Promise<void>;
  /** The card event stream, once started (live subscriber counts for health checks and tests). */
  readonly events: CardEventStream | undefined;
  /** The network token event stream, once started; shared between replicas like card events. */
  readonly networkTokenEvents: NetworkTokenEventStream | undefined;
  /** The app's Prometheus registry and metrics. */
  readonly metrics: Metrics;
  /**
   * The app's tracer (no-op unless `OTEL_*` configure an exporter); built by `start`, so a no-op
   * one before (`AppOptions.tracing` when given, from the first).
   */
  readonly tracing: Tracing;
  /** Runs the readiness checks of `GET /readiness` (503 when not ready). */
  readiness(): Promise<ReadinessReport>;
}
