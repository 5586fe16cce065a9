import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { InputValidationError } from '@pothos/plugin-validation';
import { type ExecutionResult, GraphQLError, type GraphQLFormattedError, Kind, parse } from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga, maskError, type YogaServerInstance } from 'graphql-yoga';
import type { DestinationStream } from 'pino';
import { Counter } from 'prom-client';
import { WebSocketServer } from 'ws';
import { onTokenExpiry } from './auth/token-expiry.ts';
import { AuthenticationError, createTokenVerifier } from './auth/verify-token.ts';
import type { Viewer } from './auth/viewer.ts';
import type { Config } from './config.ts';
import { type ContextServices, createContext, type GraphQLContext } from './context.ts';
import { GatewayError } from './errors.ts';
import { type CardEventStream, createCardEventStream } from './events/card-event-stream.ts';
import {
  CARD_EVENT_LOG,
  type EventLog,
  type EventLogKind,
  type LogEvent,
  NETWORK_TOKEN_EVENT_LOG,
} from './events/event-log.ts';
import {
  createNetworkTokenEventStream,
  type NetworkTokenEventStream,
} from './events/network-token-event-stream.ts';
import { createRedisEventLog } from './events/redis-event-log.ts';
import { createSqliteEventLog } from './events/sqlite-event-log.ts';
import { CARD_EVENTS_WEBHOOK_PATH, createWebhookReceiver } from './events/webhook-receiver.ts';
import { httpServerTimeouts, limitConnectionsPerAddress } from './lib/client-limits.ts';
import { createLogger, type Logger } from './lib/logger.ts';
import { createMetrics, type Metrics } from './lib/metrics.ts';
import { redactPans } from './lib/pan.ts';
import { createReadinessProbe, originOf, type ReadinessReport } from './lib/readiness.ts';
import { redactExecutionResult, redactGraphQLError } from './lib/redaction.ts';
import {
  createRequestRecord,
  errorCodeOf,
  REQUEST_ID_HEADER,
  type RequestRecord,
} from './lib/request-record.ts';
import { createTracing, extractTraceContext, recordSpanFailure, type Tracing } from './lib/tracing.ts';
import { guardSends, SLOW_CONSUMER_CLOSE_CODE, sharedPayloadReplacer } from './lib/ws-sends.ts';
import { BinAttributesCache } from './loaders/bin-attributes-cache.ts';
import { CardReadCache } from './loaders/card-read-cache.ts';
import { EventCardCache, EventNetworkTokenCache } from './loaders/index.ts';
import { useAccessLogDetails } from './plugins/access-log.ts';
import { useCardDataRedaction } from './plugins/card-data-redaction.ts';
import { useCsrfPrevention } from './plugins/csrf-prevention.ts';
import { developmentTokenIssuer, GRAPHIQL_ASSET_PREFIX, useLocalGraphiQL } from './plugins/graphiql.ts';
import { GRAPHQL_SSE_PATH, useGraphQLSSE } from './plugins/graphql-sse.ts';
import { useIntrospectionSwitch } from './plugins/introspection.ts';
import { useOperationCost } from './plugins/operation-cost.ts';
import { useOperationMetrics } from './plugins/operation-metrics.ts';
import { useOperationTracing } from './plugins/operation-tracing.ts';
import {
  createMemoryApqStore,
  createRedisApqStore,
  loadTrustedDocuments,
  type PersistedOperationsPlugin,
  usePersistedOperations,
} from './plugins/persisted-operations.ts';
import { useRequestId, withRequestId } from './plugins/request-id.ts';
import { useRequestInputChecks } from './plugins/request-input.ts';
import { useSharedSubscriptionResults } from './plugins/shared-subscription-results.ts';
import { useTokenExpiry } from './plugins/token-expiry.ts';
import { createSandbox, type Sandbox } from './sandbox/sandbox.ts';
import { schema } from './schema/index.ts';
import { createUpstream, type Upstream } from './upstream/index.ts';

/** Options for tests and embedding; production passes none. */
export interface AppOptions {
  /** Where both the gateway's and the embedded sandbox's JSON log lines go (stdout by default). */
  logDestination?: DestinationStream;
  /** Sandbox webhook retry schedule in ms (contract §4 by default); tests compress it. */
  sandboxRetryScheduleMs?: number[];
  /** Validate every embedded-sandbox answer against its OpenAPI document (tests). */
  sandboxValidateResponses?: boolean;
}

/** Addresses of a started app. */
export interface AppAddresses {
  /** Gateway base address, e.g. `http://127.0.0.1:4000`; GraphQL is at `${url}/graphql`. */
  url: string;
  /** Embedded sandbox base address (contract §1), when `UPSTREAM=embedded`. */
  sandboxUrl?: string;
  /** Base address of the metrics listener; Prometheus text at `${metricsUrl}/metrics`. */
  metricsUrl: string;
}

/** A built gateway: {@link buildApp}. */
export interface App {
  /** Starts the sandbox (embedded mode), the upstream clients and the HTTP/WebSocket server. */
  start(): Promise<AppAddresses>;
  /** Closes subscriptions (1001), the server, upstream pools and the sandbox. Idempotent. */
  stop(): Promise<void>;
  /** The embedded sandbox, once started in embedded mode. */
  readonly sandbox: Sandbox | undefined;
  /** The card event stream, once started (live subscriber counts for health checks and tests). */
  readonly events: CardEventStream | undefined;
  /**
   * The durable stream of network token notifications, once started (live subscriber counts for
   * health checks and tests); shared between replicas like card events.
   */
  readonly networkTokenEvents: NetworkTokenEventStream | undefined;
  /** The app's Prometheus registry and metrics. */
  readonly metrics: Metrics;
  /** The app's tracer (no-op unless `OTEL_*` configure an exporter). */
  readonly tracing: Tracing;
  /** Runs the readiness checks of `GET /readiness` (503 when not ready). */
  readiness(): Promise<ReadinessReport>;
}

/**
 * Builds the gateway: graphql-yoga at `/graphql` (GraphiQL, SSE subscriptions), graphql-ws on the
 * same port and path, the webhook receiver at `/webhooks/card-events`, liveness at `/health`,
 * readiness at `/readiness`, Prometheus metrics on their own port (`METRICS_PORT`, `GET /metrics`),
 * OpenTelemetry traces when `OTEL_*` configure them, one access line per request, and in embedded
 * mode the sandbox with the receiver registered for both vaults.
 */
export function buildApp(config: Config, options: AppOptions = {}): App {
  const logger = createLogger({
    name: 'gateway',
    level: config.logLevel,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  let sandbox: Sandbox | undefined;
  let events: CardEventStream | undefined;
  let networkTokenEvents: NetworkTokenEventStream | undefined;
  let upstream: Upstream | undefined;
  let server: Server | undefined;
  let metricsServer: Server | undefined;
  let wsServer: WebSocketServer | undefined;
  let stopping: Promise<void> | undefined;
  let closeApqStore: (() => Promise<void>) | undefined;
  let shuttingDown = false;
  const exampleOperations = readFileSync(new URL('./client/operations.graphql', import.meta.url), 'utf8');
  const metrics = createMetrics({ knownOperationNames: operationNamesOf(exampleOperations) });
  const tracing = createTracing(config.tracing, process.env.npm_package_version);
  const tracer = tracing.tracer;
  let readiness: (() => Promise<ReadinessReport>) | undefined;

  async function start(): Promise<AppAddresses> {
    let upstreamConfig = config.upstream;
    let sandboxUrl: string | undefined;
    if (config.upstream.mode === 'embedded') {
      sandbox = createSandbox({
        port: config.sandbox.port,
        host: '127.0.0.1',
        logger: createLogger({
          name: 'sandbox',
          level: config.logLevel,
          ...(options.logDestination ? { destination: options.logDestination } : {}),
        }),
        webhookDelayMs: config.sandbox.webhookDelayMs,
        ...(options.sandboxRetryScheduleMs ? { retryScheduleMs: options.sandboxRetryScheduleMs } : {}),
        ...(options.sandboxValidateResponses ? { validateResponses: true } : {}),
        ...(tracing.enabled ? { tracer } : {}),
      });
      sandboxUrl = (await sandbox.start()).url;
      upstreamConfig = {
        ...config.upstream,
        cardInterfaceUrl: `${sandboxUrl}/card-interface`,
        accountUpdaterUrl: `${sandboxUrl}/account-updater`,
        cardAttributesUrl: `${sandboxUrl}/card-attributes`,
        accountsUrl: `${sandboxUrl}/accounts`,
        tokenUrl: `${sandboxUrl}/oauth/token`,
      };
    }
    upstream = createUpstream(upstreamConfig, logger, { metrics, ...(tracing.enabled ? { tracer } : {}) });
    const cardReadLookups = new Counter({
      name: 'cardgraph_card_read_cache_lookups_total',
      help: 'Card reads (card interface, account updater) answered from the app-wide cache (hit) or upstream (miss).',
      labelNames: ['area', 'outcome'] as const,
      registers: [metrics.registry],
    });
    const cardReads = new CardReadCache({
      ttlMs: config.cardCache.ttlMs,
      maxEntries: config.cardCache.maxEntries,
      onLookup: (area, outcome) => cardReadLookups.inc({ area, outcome }),
    });
    events = await createCardEventStream({
      // A card event (from any replica) drops the cached reads of its card before subscribers see it.
      onEvent: (event) => cardReads.invalidate(event.tenant, event.cardId),
      log: await openEventLog(config, logger, CARD_EVENT_LOG),
      logger,
      metrics,
      backend: config.events.backend,
      ...(tracing.enabled ? { tracer } : {}),
    });
    networkTokenEvents = await createNetworkTokenEventStream({
      log: await openEventLog(config, logger, NETWORK_TOKEN_EVENT_LOG),
      logger,
      metrics,
      backend: config.events.backend,
      ...(tracing.enabled ? { tracer } : {}),
    });
    const tokens = upstream.tokens;
    const eventStream = events;
    readiness = createReadinessProbe({
      eventLog: () => eventStream.ping(),
      vaults: tokens.vaults(),
      token: (vault) => tokens.getToken(vault),
      upstreamOrigins: [
        upstreamConfig.tokenUrl,
        upstreamConfig.cardInterfaceUrl,
        upstreamConfig.accountUpdaterUrl,
        upstreamConfig.cardAttributesUrl,
        upstreamConfig.accountsUrl,
      ].map(originOf),
      isShuttingDown: () => shuttingDown,
    });
    const services: ContextServices = {
      upstream,
      events,
      eventCards: new EventCardCache(upstream),
      networkTokenEvents,
      binAttributes: new BinAttributesCache({
        ttlMs: 24 * 3_600_000,
        maxEntries: 10_000,
        maxWaitMs: config.upstream.timeoutMs,
      }),
      eventNetworkTokens: new EventNetworkTokenCache(upstream),
      cardReads,
      logger,
      limits: config.operationLimits,
    };
    const verifyToken = createTokenVerifier(config.auth);
    const trustedDocuments = loadTrustedDocuments(config.persistedOperations);
    let apqStore = createMemoryApqStore({
      maxEntries: config.persistedOperations.apqMaxEntries,
      ttlS: config.persistedOperations.apqTtlS,
    });
    if (config.events.backend === 'redis') {
      // Replicas share registrations, so a hash registered through one answers on every other.
      const redisStore = await createRedisApqStore({
        url: config.events.redisUrl!,
        ttlS: config.persistedOperations.apqTtlS,
        logger,
      });
      closeApqStore = () => redisStore.close();
      apqStore = redisStore;
    }
    const persistedOperations = usePersistedOperations({
      mode: config.persistedOperations.mode,
      trusted: trustedDocuments,
      apqStore,
    });
    const graphiql = config.graphql.graphiql
      ? await useLocalGraphiQL({
          endpoint: '/graphql',
          defaultDocument: exampleOperations,
          authorizationFor: developmentTokenIssuer(config),
          logger,
        })
      : undefined;
    if (config.graphql.graphiql && !config.graphql.introspection) {
      logger.warn('GRAPHIQL=on with INTROSPECTION=off: GraphiQL runs operations but shows no schema');
    }

    const yoga = createYoga<ServerContext, GraphQLContext>({
      schema,
      graphqlEndpoint: '/graphql',
      logging: yogaLogger(logger),
      // Yoga's own GraphiQL loads its bundle from a CDN; src/plugins/graphiql.ts serves it locally.
      graphiql: false,
      landingPage: false,
      // Liveness and readiness are answered before Yoga (see the HTTP handler below).
      healthCheckEndpoint: '/yoga-health',
      cors: corsFor(config.http.corsOrigins),
      plugins: [
        // First, so the other plugins' subscribe wrappers (tracing) wrap the shared execution.
        useSharedSubscriptionResults(),
        useRequestId(),
        useAccessLogDetails(),
        useOperationMetrics(metrics),
        ...(tracing.enabled ? [useOperationTracing(tracer, metrics.operationLabel)] : []),
        ...(graphiql ? [graphiql] : []),
        useIntrospectionSwitch({ enabled: config.graphql.introspection }),
        useCardDataRedaction(),
        useTokenExpiry(),
        useCsrfPrevention(),
        useRequestInputChecks(),
        persistedOperations,
        useGraphQLSSE({
          authenticate: async (authorization) => {
            if (!(await viewerFromHeader(authorization))) {
              throw new GraphQLError('Authentication required: send Authorization: Bearer <token>', {
                extensions: { code: 'unauthenticated', http: { status: 401 } },
              });
            }
          },
          logger,
        }),
        // Bounds the shape of one document. Its cost limit is off: it runs before variables exist
        // (`first: $n` counted as 1) and does not know our page sizes; useOperationCost replaces it.
        EnvelopArmorPlugin({
          maxDepth: { n: 12 },
          maxAliases: { n: 15 },
          maxDirectives: { n: 20 },
          maxTokens: { n: 3_000 },
          costLimit: { enabled: false },
          blockFieldSuggestion: { enabled: !config.graphql.fieldSuggestions },
        }),
        // Bounds what one operation may ask of the upstream: cost with variables and list sizes,
        // and the per-operation upstream call budget.
        useOperationCost(config.operationLimits),
      ],
      maskedErrors: {
        // Typed gateway errors that escape a result union (e.g. a refused subscription) keep their
        // message and code; anything else is masked as Yoga does by default.
        maskError: (error, message, isDev) => {
          const original = error instanceof GraphQLError ? error.originalError : undefined;
          if (
            error instanceof GraphQLError &&
            (original instanceof GatewayError || original instanceof InputValidationError)
          ) {
            return new GraphQLError(error.message, {
              ...(error.nodes ? { nodes: error.nodes } : {}),
              ...(error.path ? { path: error.path } : {}),
              extensions: {
                ...error.extensions,
                code: original instanceof GatewayError ? original.code : 'invalid-input',
              },
            });
          }
          return maskError(error, message, isDev);
        },
      },
      context: async (initial) => {
        const viewer =
          'viewer' in initial && initial.viewer !== undefined
            ? initial.viewer
            : await viewerFromHeader(initial.request.headers.get('authorization'));
        return createContext(services, viewer);
      },
    });

    async function viewerFromHeader(header: string | null | undefined): Promise<Viewer | null> {
      try {
        return await verifyToken(header ?? undefined);
      } catch (error) {
        if (error instanceof AuthenticationError) {
          // The refusal is the operator's first clue when a client "just spins"; the message never
          // quotes the token.
          logger.info({ code: error.code, reason: error.message }, 'request refused: bad client token');
          throw new GraphQLError(error.message, { extensions: { code: error.code, http: { status: 401 } } });
        }
        throw error;
      }
    }

    const receiver = createWebhookReceiver({
      secrets: config.webhooks.secrets,
      toleranceS: config.webhooks.toleranceS,
      logger,
      bus: events,
      networkTokens: networkTokenEvents,
      metrics,
      ...(tracing.enabled ? { tracer } : {}),
    });
    const probe = readiness;
    server = createServer(httpServerTimeouts(config.http), (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '/').split('?')[0]!;
      const route = ROUTES.has(path)
        ? path
        : path.startsWith(GRAPHIQL_ASSET_PREFIX)
          ? GRAPHIQL_ASSET_PREFIX
          : 'other';
      const record = createRequestRecord(req.headers[REQUEST_ID_HEADER]);
      res.setHeader(REQUEST_ID_HEADER, record.id);
      const span = tracer.startSpan(
        `${req.method ?? 'GET'} ${route}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': req.method ?? 'GET',
            'http.route': route,
            'cardgraph.request_id': record.id,
          },
        },
        extractTraceContext(req.headers),
      );
      const startedAt = performance.now();
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) recordSpanFailure(span, `http-${res.statusCode}`);
        span.end();
        writeAccessLine(logger, {
          record,
          method: req.method ?? 'GET',
          route,
          status: res.writableFinished ? res.statusCode : 499,
          durationMs: performance.now() - startedAt,
        });
      });
      context.with(trace.setSpan(context.active(), span), () => {
        if (path === CARD_EVENTS_WEBHOOK_PATH) {
          receiver(req, res).catch((error: unknown) => {
            logger.error({ err: error }, 'webhook receiver failed');
            if (!res.headersSent) res.writeHead(500).end();
          });
          return;
        }
        if (path === '/health') {
          sendJson(res, 200, { status: 'ok' });
          return;
        }
        if (path === '/readiness') {
          probe().then(
            (report) => sendJson(res, report.status === 'ready' ? 200 : 503, report),
            (error: unknown) => {
              logger.error({ err: error }, 'readiness probe failed');
              sendJson(res, 503, { status: 'unavailable', checks: {} });
            },
          );
          return;
        }
        void yoga.handle(req, res, { requestRecord: record });
      });
    });

    limitConnectionsPerAddress(server, config.http.maxConnectionsPerAddress, logger);

    wsServer = new WebSocketServer({
      server,
      path: '/graphql',
      maxPayload: config.websocket.maxPayloadBytes,
    });
    useGraphqlWs(wsServer, yoga, persistedOperations, verifyToken, config.websocket, logger);

    metricsServer = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        sendJson(res, 404, { errors: [{ status: '404', code: 'not-found', detail: 'GET /metrics only' }] });
        return;
      }
      metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' });
          res.end(req.method === 'HEAD' ? undefined : text);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'metrics collection failed');
          res.writeHead(500).end();
        },
      );
    });
    await listen(metricsServer, config.metrics.port, config.metrics.host);
    await listen(server, config.port, config.host);
    const url = `http://${reachable(config.host)}:${(server.address() as AddressInfo).port}`;
    const metricsUrl = `http://${reachable(config.metrics.host)}:${(metricsServer.address() as AddressInfo).port}`;
    if (sandbox) {
      for (const vault of Object.keys(config.upstream.credentials)) {
        sandbox.registerWebhookEndpoint(vault, {
          url: `${url}${CARD_EVENTS_WEBHOOK_PATH}`,
          secret: config.webhooks.secrets[0]!,
        });
      }
    }
    logger.info(
      {
        url,
        graphql: `${url}/graphql`,
        metrics: `${metricsUrl}/metrics`,
        upstream: config.upstream.mode,
        sandboxUrl,
        tracing: tracing.enabled,
      },
      'cardgraph gateway listening',
    );
    return sandboxUrl ? { url, sandboxUrl, metricsUrl } : { url, metricsUrl };
  }

  async function stop(): Promise<void> {
    stopping ??= (async () => {
      // 0. Readiness answers 503 from now on, so balancers stop sending new work here.
      shuttingDown = true;
      const stopStarted = performance.now();
      // Bounded: shortly before SHUTDOWN_TIMEOUT_MS, upstream calls still in flight are aborted (their
      // requests answer at once with client-closed) and every connection still open is closed, so an
      // upstream that never finishes cannot hold the shutdown (src/main.ts exits at the limit anyway).
      const cutOffMs = Math.max(0, config.shutdownTimeoutMs - Math.min(2_000, config.shutdownTimeoutMs / 3));
      const cutOff = setTimeout(() => {
        logger.warn({ cutOffMs }, 'shutdown: aborting upstream calls and connections still open');
        upstream?.http.abortInFlight();
        server?.closeAllConnections();
      }, cutOffMs);
      // 1. Accept no new connections; requests on open keep-alive connections still finish.
      const closed = server
        ? new Promise<void>((resolve) => server!.close(() => resolve()))
        : Promise.resolve();
      server?.closeIdleConnections();
      // 2. Complete open subscriptions: graphql-ws sockets close with 1001, SSE streams end.
      if (wsServer) {
        for (const client of wsServer.clients) client.close(1001, 'Server shutting down');
        await new Promise<void>((resolve) => wsServer!.close(() => resolve()));
      }
      // 3. Finish webhook appends in flight, then close the event log.
      await Promise.all([events?.close(), networkTokenEvents?.close()]);
      // SSE responses end a moment after their streams do; close each connection as it goes idle,
      // and any still open after 5 s.
      const sweep = setInterval(() => server?.closeIdleConnections(), 50);
      const force = setTimeout(() => server?.closeAllConnections(), Math.min(5_000, cutOffMs));
      await closed;
      clearInterval(sweep);
      clearTimeout(force);
      // Event joins may still be reading; they get what is left of the cut-off.
      await upstream?.close(Math.max(0, cutOffMs - (performance.now() - stopStarted)));
      clearTimeout(cutOff);
      await closeApqStore?.();
      await sandbox?.stop();
      if (metricsServer?.listening) {
        const metricsClosed = new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
        metricsServer.closeAllConnections();
        await metricsClosed;
      }
      await tracing
        .shutdown()
        .catch((error: unknown) =>
          logger.warn({ err: (error as Error).message }, 'trace export at shutdown failed'),
        );
      logger.info('cardgraph gateway stopped');
    })();
    return stopping;
  }

  return {
    start,
    stop,
    get sandbox() {
      return sandbox;
    },
    get events() {
      return events;
    },
    get networkTokenEvents() {
      return networkTokenEvents;
    },
    metrics,
    tracing,
    readiness() {
      if (!readiness) return Promise.reject(new Error('app not started'));
      return readiness();
    },
  };
}

/** Routes named in access lines and spans; any other path is logged as `other` (paths may carry input). */
const ROUTES = new Set([
  '/graphql',
  GRAPHQL_SSE_PATH,
  CARD_EVENTS_WEBHOOK_PATH,
  '/health',
  '/readiness',
  '/yoga-health',
]);

/**
 * Writes the access line of one request: `info` (`error` for 5xx) with `reqId`, `method`, `route`,
 * `operation` (masked names), `status`, `durationMs` and `errorCodes`; never the query text, the
 * variables or a header value.
 */
function writeAccessLine(
  logger: Logger,
  line: {
    record: RequestRecord;
    method: string;
    route: string;
    status: number;
    durationMs: number;
    closeCode?: number;
  },
): void {
  const { record } = line;
  const fields = {
    reqId: record.id,
    transport: record.transport,
    method: line.method,
    route: line.route,
    ...(record.operationNames.size > 0
      ? { operation: [...record.operationNames].map((name) => maskDigitRuns(name).slice(0, 100)).join(',') }
      : {}),
    status: line.status,
    ...(line.closeCode === undefined ? {} : { closeCode: line.closeCode }),
    durationMs: Math.round(line.durationMs * 10) / 10,
    ...(record.errorCodes.size > 0
      ? { errorCodes: [...record.errorCodes].map((code) => redactPans(code).slice(0, 64)) }
      : {}),
  };
  if (line.status >= 500) logger.error(fields, 'request');
  else logger.info(fields, 'request');
}

/**
 * A client-chosen name with every run of 12 or more digits cut to its first six and last four
 * (`Q4000210000192002` → `Q400021…2002`): redactPans needs word boundaries, which a GraphQL name
 * glued to a PAN does not have.
 */
function maskDigitRuns(name: string): string {
  return redactPans(name).replace(/\d{12,}/g, (digits) => `${digits.slice(0, 6)}…${digits.slice(-4)}`);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    'cache-control': 'no-store',
  });
  res.end(json);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** A host clients can reach for a bind address (`0.0.0.0` → `127.0.0.1`). */
function reachable(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** Names of the operations in a GraphQL document (the shipped example operations). */
function operationNamesOf(source: string): string[] {
  return parse(source).definitions.flatMap((definition) =>
    definition.kind === Kind.OPERATION_DEFINITION && definition.name ? [definition.name.value] : [],
  );
}

/**
 * graphql-ws on the gateway's port (`/graphql`). The client token comes in
 * `connectionParams.authorization` and is checked at `connection_init`: a missing or invalid token
 * closes the socket with 4403, and so does the token's expiry later on (src/auth/token-expiry.ts, the
 * same instant SSE streams end). A socket holds at most `limits.maxSubscriptionsPerSocket`
 * operations. Execution goes through Yoga's envelop so plugins (limits, redaction) apply alike.
 * A bad operation (syntax error, validation error, limit breach, refused context, failed execution)
 * fails only itself with an `error` message; the socket and its other subscriptions stay open.
 * Every error, result and close reason leaves through the redaction of src/lib/redaction.ts.
 */
function useGraphqlWs(
  wsServer: WebSocketServer,
  yoga: YogaServerInstance<ServerContext, GraphQLContext>,
  persistedOperations: PersistedOperationsPlugin,
  verifyToken: (header: string | undefined) => Promise<Viewer | null>,
  limits: Config['websocket'],
  logger: Logger,
): void {
  const recordsBySocket = new WeakMap<object, RequestRecord>();
  type WsExtra = {
    viewer?: Viewer | null;
    operations?: Set<string>;
    cancelExpiry?: () => void;
    record?: RequestRecord;
  };
  /** A failure of our own code while preparing an operation: logged, answered as Yoga masks it. */
  const unexpected = (error: unknown, id: string): GraphQLError[] => {
    logger.error({ err: error, operationId: id }, 'graphql-ws operation could not be prepared');
    return [new GraphQLError('Unexpected error.', { extensions: { code: 'internal-error' } })];
  };
  const redactedResults = new WeakMap<object, ReturnType<typeof redactExecutionResult>>();
  useServer<Record<string, unknown> | undefined, WsExtra>(
    {
      connectionInitWaitTimeout: limits.connectionInitTimeoutMs,
      // One serialization per shared result (see guardSends below).
      jsonMessageReplacer: sharedPayloadReplacer,
      onConnect: async (ctx) => {
        const record = recordsBySocket.get(ctx.extra.socket);
        if (record) ctx.extra.record = record;
        const authorization = ctx.connectionParams?.authorization;
        let viewer: Viewer | null;
        try {
          viewer = await verifyToken(typeof authorization === 'string' ? authorization : undefined);
        } catch (error) {
          if (error instanceof AuthenticationError) {
            logger.info(
              { code: error.code, reason: error.message },
              'graphql-ws connection refused (4403): bad client token',
            );
            return false;
          }
          throw error;
        }
        if (!viewer) {
          logger.info('graphql-ws connection refused (4403): no token in connectionParams.authorization');
          return false;
        }
        ctx.extra.viewer = viewer;
        ctx.extra.operations = new Set();
        // The same timer ends SSE streams (src/plugins/token-expiry.ts) at the same instant.
        ctx.extra.cancelExpiry = onTokenExpiry(viewer.expiresAt, () =>
          ctx.extra.socket.close(4403, 'Forbidden: token expired'),
        );
        return true;
      },
      onClose: (ctx) => ctx.extra.cancelExpiry?.(),
      execute: (args) => runSafely(() => (args.rootValue as EnvelopedRoot).execute(args)),
      subscribe: (args) => runSafely(() => (args.rootValue as EnvelopedRoot).subscribe(args)),
      onSubscribe: async (ctx, id, payload) => {
        const operations = ctx.extra.operations!;
        if (operations.size >= limits.maxSubscriptionsPerSocket) {
          return [
            new GraphQLError(`At most ${limits.maxSubscriptionsPerSocket} operations per connection`, {
              extensions: { code: 'too-many-subscriptions' },
            }),
          ];
        }
        // A bad operation fails alone (an `error` message); the socket and its siblings stay.
        const refuse = (errors: readonly GraphQLError[]) => {
          const redacted = errors.map(redactGraphQLError);
          const requestId = ctx.extra.record?.id;
          return requestId
            ? (withRequestId({ errors: redacted }, requestId).errors as GraphQLError[])
            : redacted;
        };
        try {
          // Persisted operations resolve here as Yoga's onParams does for HTTP and SSE; a refusal
          // (GraphQLError) fails this operation only.
          const params = (await persistedOperations.resolveParams({
            query: payload.query,
            ...(payload.operationName ? { operationName: payload.operationName } : {}),
            ...(payload.variables ? { variables: payload.variables } : {}),
            ...(payload.extensions ? { extensions: payload.extensions } : {}),
          })) as typeof payload;
          const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
            ...ctx,
            viewer: ctx.extra.viewer ?? null,
            params,
            requestRecord: ctx.extra.record,
          } as never);
          // parse throws the syntax error or the token limit breach of this operation only.
          const document = parse(params.query);
          const errors = validate(schema, document);
          if (errors.length > 0) return refuse(errors);
          const contextValue = await contextFactory();
          operations.add(id);
          return {
            schema,
            operationName: params.operationName ?? null,
            document,
            variableValues: params.variables ?? null,
            contextValue,
            rootValue: { execute, subscribe } as EnvelopedRoot,
          };
        } catch (error) {
          if (error instanceof GraphQLError) return refuse([error]);
          return unexpected(error, id);
        }
      },
      onNext: (_ctx, _id, _payload, _args, result) => {
        // A result shared by every subscriber of an event is redacted once, and stays one object
        // (so it is also serialized once, see sharedPayloadReplacer).
        let redacted = redactedResults.get(result);
        if (redacted === undefined) {
          redacted = redactExecutionResult(result);
          redactedResults.set(result, redacted);
        }
        return redacted === result ? undefined : redacted;
      },
      onComplete: (ctx, id) => {
        ctx.extra.operations?.delete(id);
      },
      onError: (ctx, _id, _payload, errors) => {
        // A client mistake: codes only (messages quote the client's document), and the access line
        // of the connection carries them too.
        const codes = errors.map((error) => errorCodeOf(error, 'GRAPHQL_VALIDATION_FAILED'));
        for (const code of codes) ctx.extra.record?.errorCodes.add(code);
        logger.info({ reqId: ctx.extra.record?.id, errorCodes: codes }, 'graphql-ws operation refused');
        return errors.map((error) => toWsError(redactGraphQLError(error)));
      },
    },
    wsServer,
  );
  // graphql-ws prints socket errors (e.g. a client exceeding maxPayload, which ws answers with 1009)
  // to the console; log them as one line instead and close the socket as graphql-ws would.
  // Each connection is one request of the access log, written when the socket closes.
  wsServer.on('connection', (socket, request) => {
    const record = createRequestRecord(request.headers[REQUEST_ID_HEADER], 'graphql-ws');
    const startedAt = performance.now();
    recordsBySocket.set(socket, record);
    guardSends(socket, limits.maxBufferedBytes, () =>
      logger.warn(
        { code: SLOW_CONSUMER_CLOSE_CODE, bufferedBytes: socket.bufferedAmount },
        'graphql-ws slow consumer closed: too much unsent data',
      ),
    );
    socket.once('close', (code) =>
      writeAccessLine(logger, {
        record,
        method: 'GET',
        route: '/graphql',
        status: 101,
        durationMs: performance.now() - startedAt,
        closeCode: code,
      }),
    );
    // Close reasons are text that leaves the process: graphql-ws puts error messages in them.
    const close = socket.close.bind(socket);
    socket.close = (code?: number, reason?: string | Buffer) =>
      close(code, reason === undefined ? undefined : redactPans(String(reason)));
    socket.removeAllListeners('error');
    socket.on('error', (error) => {
      logger.warn({ err: error.message }, 'graphql-ws socket error');
      if (socket.readyState === socket.OPEN) socket.close(1011, 'Internal Error');
    });
  });
}

/** Opens the configured durable event log (`EVENTS_BACKEND`). */
async function openEventLog<E extends LogEvent>(
  config: Config,
  logger: Logger,
  kind: EventLogKind<E>,
): Promise<EventLog<E>> {
  const retention = { maxAgeMs: config.events.retentionMaxAgeMs, maxCount: config.events.retentionMaxCount };
  if (config.events.backend === 'redis') {
    return createRedisEventLog({ url: config.events.redisUrl!, retention, logger, kind });
  }
  return createSqliteEventLog({ dataDir: config.events.dataDir, retention, kind });
}

/** What the HTTP handler and graphql-ws pass to Yoga besides the request. */
type ServerContext = { viewer?: Viewer | null; requestRecord?: RequestRecord };

/**
 * CORS of the GraphQL endpoint (issue 10, class 9): only a request whose `Origin` is one of
 * `CORS_ORIGINS` gets CORS headers (that origin, credentials allowed, GET and POST, preflight cached
 * 10 min); any other origin gets none, so browsers keep other sites from reading answers. Yoga's
 * default would reflect every origin with credentials.
 */
function corsFor(origins: readonly string[]) {
  const allowed = new Set(origins);
  return (request: Request) => {
    const origin = request.headers.get('origin');
    if (!origin || !allowed.has(origin)) return false as const;
    return { origin, credentials: true, methods: ['GET', 'POST'], maxAge: 600 };
  };
}

/**
 * A GraphQL error as graphql-ws sends it: without Yoga's `http` extension (status and headers of the
 * HTTP transport), as Yoga leaves it out of HTTP bodies too.
 */
function toWsError(error: GraphQLError): GraphQLFormattedError {
  const { http: _http, ...extensions } = error.extensions;
  const json = error.toJSON();
  if (Object.keys(extensions).length > 0) return { ...json, extensions };
  const { extensions: _all, ...rest } = json;
  return rest;
}

/**
 * Runs an enveloped execute/subscribe so that a throw becomes an error result of that operation
 * (graphql-ws would otherwise close the whole socket with 4500).
 */
async function runSafely<T>(run: () => T | Promise<T>): Promise<T | ExecutionResult> {
  try {
    return await run();
  } catch (error) {
    return {
      errors: [
        error instanceof GraphQLError
          ? redactGraphQLError(error)
          : new GraphQLError('Unexpected error.', { extensions: { code: 'internal-error' } }),
      ],
    };
  }
}

/** Yoga's enveloped execute/subscribe, carried to graphql-ws through `rootValue`. */
type EnvelopedRoot = {
  execute: NonNullable<ServerOptions['execute']>;
  subscribe: NonNullable<ServerOptions['subscribe']>;
};

/** Adapts pino to Yoga's logger interface. */
function yogaLogger(logger: Logger) {
  // Yoga passes errors and request details; log them as masked strings, never as raw objects.
  const details = (args: unknown[]) => ({ yoga: args.slice(1).map((arg) => redactPans(String(arg))) });
  return {
    debug: (...args: unknown[]) => logger.debug(details(args), String(args[0])),
    info: (...args: unknown[]) => logger.info(details(args), String(args[0])),
    warn: (...args: unknown[]) => logger.warn(details(args), String(args[0])),
    error: (...args: unknown[]) => logger.error(details(args), String(args[0])),
  };
}
