import { readFileSync } from 'node:fs';
import { Kind, parse } from 'graphql';
import type { DestinationStream } from 'pino';
import type { GatewayConfig } from './config.ts';
import type { CardEventStream } from './events/card-event-stream.ts';
import type { NetworkTokenEventStream } from './events/network-token-event-stream.ts';
import { createWebhookReceiver } from './events/webhook-receiver.ts';
import { createLogger } from './lib/logger.ts';
import { createMetrics, type Metrics } from './lib/metrics.ts';
import { createReadinessProbe, originOf, type ReadinessReport } from './lib/readiness.ts';
import { createTracing, type Tracing } from './lib/tracing.ts';
import { createRuntime } from './runtime/index.ts';
import {
  createCardReads,
  createContextServices,
  type EventStreams,
  openApqStore,
  openEventStreams,
  shutDownTracing,
  upstreamAddresses,
} from './runtime/services.ts';
import { serveGraphqlWs } from './server/graphql-ws.ts';
import { createHttpServer } from './server/http.ts';
import { listen } from './server/listen.ts';
import { serveMetrics } from './server/metrics.ts';
import { createShutdown } from './server/shutdown.ts';
import { createUpstream } from './upstream/index.ts';

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
  /** Graceful, bounded by `SHUTDOWN_TIMEOUT_MS` (src/server/shutdown.ts). Idempotent. */
  stop(): Promise<void>;
  /** The card event stream, once started (live subscriber counts for health checks and tests). */
  readonly events: CardEventStream | undefined;
  /** The network token event stream, once started; shared between replicas like card events. */
  readonly networkTokenEvents: NetworkTokenEventStream | undefined;
  /** The app's Prometheus registry and metrics. */
  readonly metrics: Metrics;
  /** The app's tracer (no-op unless `OTEL_*` configure an exporter). */
  readonly tracing: Tracing;
  /** Runs the readiness checks of `GET /readiness` (503 when not ready). */
  readiness(): Promise<ReadinessReport>;
}

/**
 * The gateway's composition root: upstream clients, durable event streams, the GraphQL runtime
 * (src/runtime/) and its servers (src/server/: HTTP with GraphQL, SSE, webhooks, `/health`,
 * `/readiness`; graphql-ws on the same port; metrics on `METRICS_PORT`). Each resource registers its
 * teardown as it is made, so `stop` runs them in reverse: readiness 503 and no new connections,
 * sockets closed with 1001, event streams closed after in-flight webhook appends (SSE streams end),
 * open connections drained, upstream pools, APQ store, metrics, traces.
 */
export function buildApp(config: GatewayConfig, options: AppOptions = {}): App {
  const logger = createLogger({
    name: 'gateway',
    level: config.logLevel,
    destination: options.logDestination,
  });
  const exampleOperations = readFileSync(new URL('./client/operations.graphql', import.meta.url), 'utf8');
  const metrics = createMetrics({ knownOperationNames: operationNamesOf(exampleOperations) });
  const tracing = options.tracing ?? createTracing(config.tracing, process.env.npm_package_version);
  const telemetry = { metrics, ...(tracing.enabled ? { tracer: tracing.tracer } : {}) };
  const resources = new AsyncDisposableStack();
  const shutdown = createShutdown(config.shutdownTimeoutMs, logger);
  let running: (EventStreams & { readiness: () => Promise<ReadinessReport> }) | undefined;
  let started = false;
  let stopping: Promise<void> | undefined;

  async function open(): Promise<AppAddresses> {
    resources.defer(() => void logger.info('cardgraph gateway stopped'));
    if (!options.tracing) resources.defer(() => shutDownTracing(tracing, logger));
    const metricsListener = resources.use(await serveMetrics({ metrics, ...config.metrics, logger }));
    const upstream = createUpstream(config.upstream, logger, telemetry);
    resources.defer(() => upstream.close(shutdown.remainingMs()));
    shutdown.onCutOff(() => upstream.http.abortInFlight());
    const apqStore = resources.use(await openApqStore(config, logger));
    const cardReads = createCardReads(config.cardCache, metrics);
    // Closed between the servers' steps below, so they are made here and moved there.
    const streams = resources.use(new AsyncDisposableStack());
    const { events, networkTokenEvents } = await openEventStreams(config, streams, {
      logger,
      // A card event (from any replica) drops the cached reads of its card before subscribers see it.
      onCardEvent: (event) => cardReads.invalidate(event.tenant, event.cardId),
      ...telemetry,
    });
    const readiness = createReadinessProbe({
      eventLog: () => events.ping(),
      vaults: upstream.tokens.vaults(),
      token: (vault) => upstream.tokens.getToken(vault),
      upstreamOrigins: upstreamAddresses(config.upstream).map(originOf),
      isShuttingDown: () => shutdown.begun,
    });
    running = { events, networkTokenEvents, readiness };
    const services = createContextServices(config, {
      upstream,
      events,
      networkTokenEvents,
      cardReads,
      logger,
    });
    const runtime = await createRuntime({
      config,
      services,
      apqStore,
      metrics,
      tracing,
      logger,
      exampleOperations,
    });
    const webhooks = createWebhookReceiver({
      ...config.webhooks,
      logger,
      bus: events,
      networkTokens: networkTokenEvents,
      ...telemetry,
    });
    const http = createHttpServer({
      http: config.http,
      runtime,
      webhooks,
      readiness,
      tracer: tracing.tracer,
      logger,
      forceCloseAfterMs: Math.min(5_000, shutdown.cutOffMs),
    });
    shutdown.onCutOff(() => http.server.closeAllConnections());
    // Shutdown runs these four in reverse: no new connections (readiness already 503), graphql-ws
    // sockets close with 1001, event streams close after in-flight webhook appends (SSE streams
    // end), then the open connections drain.
    resources.use(http);
    resources.use(streams.move());
    resources.use(serveGraphqlWs({ server: http.server, runtime, limits: config.websocket, logger }));
    resources.defer(() => http.stopAccepting());
    const url = await listen(http.server, config.port, config.host);
    const metricsUrl = metricsListener.url;
    logger.info(
      {
        url,
        graphql: `${url}/graphql`,
        metrics: `${metricsUrl}/metrics`,
        upstream: config.upstream.mode,
        tracing: tracing.enabled,
      },
      'cardgraph gateway listening',
    );
    return { url, metricsUrl };
  }

  return {
    async start() {
      if (started)
        throw new Error('buildApp: start() was already called; an App starts once (build another)');
      started = true;
      try {
        return await open();
      } catch (error) {
        await resources.disposeAsync();
        throw error;
      }
    },
    stop() {
      stopping ??= shutdown.run(() => resources.disposeAsync());
      return stopping;
    },
    get events() {
      return running?.events;
    },
    get networkTokenEvents() {
      return running?.networkTokenEvents;
    },
    metrics,
    tracing,
    readiness() {
      return running ? running.readiness() : Promise.reject(new Error('app not started'));
    },
  };
}

/** Names of the operations in a GraphQL document (the shipped example operations). */
function operationNamesOf(source: string): string[] {
  return parse(source).definitions.flatMap((definition) =>
    definition.kind === Kind.OPERATION_DEFINITION && definition.name ? [definition.name.value] : [],
  );
}
