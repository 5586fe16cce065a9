import { flushCompileCache, getCompileCacheDir } from 'node:module';
import type { App, AppAddresses, AppOptions } from './app-types.ts';
import type { GatewayConfig } from './config/index.ts';
import { createLogger } from './lib/logger.ts';
import { createMetrics } from './lib/metrics.ts';
import { createShutdown } from './lib/shutdown.ts';
import { createTracing, TRACING_OFF } from './lib/tracing.ts';
import { LiveHub } from './live/hub.ts';
import { trustedOperationNames } from './plugins/operation-metrics.ts';
import { createRuntime } from './runtime/index.ts';
import { type GatewayServices, openServices, shutDownTracing } from './runtime/services.ts';
import { serveGraphqlWs } from './server/graphql-ws.ts';
import { createHttpServer } from './server/http.ts';
import { listen } from './server/listen.ts';
import { serveMetrics } from './server/metrics.ts';

export type { App, AppAddresses, AppOptions } from './app-types.ts';

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
  const metrics = createMetrics({
    knownOperationNames: trustedOperationNames(config.persistedOperations),
    vaultLabels: config.metrics.vaultLabels,
  });
  // Built in `open`: the OpenTelemetry SDK loads there, and only when tracing is configured.
  let tracing = options.tracing ?? TRACING_OFF;
  const shutdown = createShutdown(config.shutdownTimeoutMs, logger);
  const resources = new AsyncDisposableStack();
  let running: GatewayServices | undefined;
  let started = false;

  async function open(): Promise<AppAddresses> {
    resources.defer(() => void logger.info('cardgraph gateway stopped'));
    if (!options.tracing) {
      tracing = await createTracing(config.tracing, config.version);
      resources.defer(() => shutDownTracing(tracing, logger));
    }
    const telemetry = { logger, metrics, ...(tracing.enabled ? { tracer: tracing.tracer } : {}) };
    const metricsListener = resources.use(
      await serveMetrics({
        metrics,
        ...config.metrics,
        logger,
        // The full report (vault ids, upstream origins) on the internal port only.
        readiness: () => (running ? running.readiness() : Promise.reject(new Error('app not started'))),
      }),
    );
    // The event streams close between the servers' teardown steps below.
    const streams = resources.use(new AsyncDisposableStack());
    running = await openServices(config, { resources, streams }, { ...telemetry, shutdown });
    const { services, apqStore, readiness, webhooks } = running;
    const live = new LiveHub({ metrics, logger });
    const runtime = await createRuntime({ config, services, apqStore, metrics, tracing, logger, live });
    const http = createHttpServer({
      config,
      runtime,
      live,
      webhooks,
      readiness,
      logger,
      metrics,
      tracer: tracing.tracer,
      shutdown,
    });
    // Registered in the reverse of the shutdown order that buildApp's documentation gives.
    resources.use(http);
    resources.use(streams.move());
    resources.use(
      serveGraphqlWs({ server: http.server, runtime, limits: config.websocket, logger, hub: live }),
    );
    resources.defer(() => http.stopAccepting());
    const url = await listen(http.server, config.port, config.host, 'PORT');
    const metricsUrl = metricsListener.url;
    const listening = {
      graphql: `${url}/graphql`,
      metrics: `${metricsUrl}/metrics`,
      tracing: tracing.enabled,
    };
    logger.info({ url, ...listening, upstream: config.upstream.mode }, 'cardgraph gateway listening');
    // With Node's compile cache on (NODE_COMPILE_CACHE, see the Dockerfile), what this start compiled
    // is written now, not only at a clean exit: a replica that is killed still leaves the next start
    // its stripped TypeScript and V8 code cache (issue 21 item 2). After listening, off the start.
    if (getCompileCacheDir()) setImmediate(flushCompileCache);
    return { url, metricsUrl };
  }

  let stopping: Promise<void> | undefined;
  return {
    async start() {
      if (started) throw new Error('App.start() was already called: an App starts once');
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
    get tracing() {
      return tracing;
    },
    readiness() {
      return running ? running.readiness() : Promise.reject(new Error('app not started'));
    },
  };
}
