import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APQStore } from '@graphql-yoga/plugin-apq';
import type { Tracer } from '@opentelemetry/api';
import { Counter } from 'prom-client';
import type { Config, GatewayConfig } from '../config/index.ts';
import type { ContextServices } from '../context.ts';
import { type CardEventStream, createCardEventStream } from '../events/card-event-stream.ts';
import {
  CARD_EVENT_LOG,
  type EventLog,
  type EventLogKind,
  type LogEvent,
  type LoggedCardEvent,
  NETWORK_TOKEN_EVENT_LOG,
  type RetentionPolicy,
  receiptPeriodMs,
} from '../events/event-log.ts';
import {
  createNetworkTokenEventStream,
  type NetworkTokenEventStream,
} from '../events/network-token-event-stream.ts';
import { openSqliteEventDatabase } from '../events/sqlite-event-log.ts';
import { UNMAPPED_NOTIFICATION_LOG, UnmappedNotificationStore } from '../events/unmapped-notification.ts';
import { createWebhookReceiver } from '../events/webhook-receiver.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { createReadinessProbe, type ReadinessReport, upstreamProbeOrigins } from '../lib/readiness.ts';
import type { Shutdown } from '../lib/shutdown.ts';
import type { Tracing } from '../lib/tracing.ts';
import { BinAttributesCache } from '../loaders/bin-attributes-cache.ts';
import {
  type CardInvalidationChannel,
  createLocalCardInvalidations,
  openRedisCardInvalidations,
} from '../loaders/card-invalidations.ts';
import { CardReadCache } from '../loaders/card-read-cache.ts';
import { EventCardCache, EventNetworkTokenCache } from '../loaders/index.ts';
import { createMemoryApqStore, createRedisApqStore } from '../plugins/persisted-operations.ts';
import { createUpstream } from '../upstream/index.ts';

/** What {@link openServices} made. */
export interface GatewayServices extends EventStreams {
  /** The context services of every operation (src/context.ts). */
  services: ContextServices;
  /** The store of automatic persisted queries ({@link openApqStore}). */
  apqStore: APQStore;
  /** The checks of `GET /readiness`: event log, upstream tokens and addresses, not shutting down. */
  readiness: () => Promise<ReadinessReport>;
  /** The webhook receiver (src/events/webhook-receiver.ts) publishing into the event streams. */
  webhooks: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

/**
 * Opens what operations run on: the upstream clients (closed on `resources` with what is left of
 * the shutdown's cut-off, aborted at the cut-off), the APQ store, the card read cache and the two
 * event streams (their close registered on `streams`, which the caller places between its servers'
 * teardown steps), the webhook receiver publishing into them, and the readiness checks over them.
 */
export async function openServices(
  config: GatewayConfig,
  stacks: { resources: AsyncDisposableStack; streams: AsyncDisposableStack },
  options: { logger: Logger; metrics: Metrics; tracer?: Tracer; shutdown: Shutdown },
): Promise<GatewayServices> {
  const { shutdown, ...telemetry } = options;
  const { logger, metrics } = options;
  const upstream = createUpstream(config.upstream, logger, telemetry);
  stacks.resources.defer(() => upstream.close(shutdown.remainingMs()));
  shutdown.onCutOff(() => upstream.http.abortInFlight());
  const apqStore = stacks.resources.use(await openApqStore(config, logger));
  // Card changes reach every replica's card read cache (issue 20 item 2).
  const invalidations = await openCardInvalidations(config, logger);
  stacks.resources.defer(() => invalidations.close());
  const cardReads = createCardReads(config.cardCache, metrics, invalidations.publish);
  invalidations.listen((change) => cardReads.invalidate(change.vaultId, change.cardId));
  const streams = await openEventStreams(config, stacks.streams, {
    ...telemetry,
    // A card event (from any replica) drops the cached reads of its card before subscribers see it.
    onCardEvent: (event) => {
      if (event.cardId !== undefined) cardReads.invalidate(event.tenant, event.cardId);
    },
  });
  const readiness = createReadinessProbe({
    // Either log refusing appends fails readiness (issue 20 item 1), not only an unreachable backend.
    eventLog: async () => {
      await Promise.all([streams.events.ping(), streams.networkTokenEvents.ping()]);
    },
    vaults: upstream.tokens.vaults(),
    token: (vault) => upstream.tokens.getToken(vault),
    upstreamOrigins: upstreamProbeOrigins(config.upstream),
    isShuttingDown: () => shutdown.begun,
  });
  const services = createContextServices(config, { upstream, ...streams, cardReads, logger });
  const webhooks = createWebhookReceiver({
    ...config.webhooks,
    ...telemetry,
    bus: streams.events,
    networkTokens: streams.networkTokenEvents,
    unmapped: streams.unmappedNotifications,
    servedVaults: Object.keys(config.upstream.credentials),
  });
  return { ...streams, services, apqStore, readiness, webhooks };
}

/** The durable event streams of the gateway, and the durable record of unmapped notifications. */
export interface EventStreams {
  events: CardEventStream;
  networkTokenEvents: NetworkTokenEventStream;
  unmappedNotifications: UnmappedNotificationStore;
}

/**
 * Opens the card and network token event streams and the unmapped notification store on their
 * configured logs ({@link openEventLogs}), registering each one's close (in-flight appends finish,
 * then the log closes) on `stack`.
 */
async function openEventStreams(
  config: Config,
  stack: AsyncDisposableStack,
  options: {
    logger: Logger;
    metrics: Metrics;
    tracer?: Tracer;
    /** Runs for each card event, from any replica, before subscribers see it. */
    onCardEvent: (event: LoggedCardEvent) => void;
  },
): Promise<EventStreams> {
  const { onCardEvent, ...telemetry } = options;
  const shared = { ...telemetry, backend: config.events.backend };
  const openLog = await openEventLogs(config, stack, options.logger);
  const events = await createCardEventStream({
    log: await openLog(CARD_EVENT_LOG),
    onEvent: onCardEvent,
    ...shared,
  });
  stack.defer(() => events.close());
  const networkTokenEvents = await createNetworkTokenEventStream({
    log: await openLog(NETWORK_TOKEN_EVENT_LOG),
    ...shared,
  });
  stack.defer(() => networkTokenEvents.close());
  const unmappedNotifications = new UnmappedNotificationStore({
    log: await openLog(UNMAPPED_NOTIFICATION_LOG, {
      maxAgeMs: config.events.unmappedRetentionMaxAgeMs,
      maxBytes: config.events.unmappedMaxBytes,
    }),
    logger: options.logger,
    maxBytes: config.events.unmappedMaxBytes,
  });
  stack.defer(() => unmappedNotifications.close());
  return { events, networkTokenEvents, unmappedNotifications };
}

/**
 * The long-lived services every operation's context is built from (src/context.ts): `parts` plus
 * the per-event memos and the BIN attributes cache (a day, 10,000 BINs).
 */
function createContextServices(
  config: Config,
  parts: Pick<
    ContextServices,
    'upstream' | 'events' | 'networkTokenEvents' | 'unmappedNotifications' | 'cardReads' | 'logger'
  >,
): ContextServices {
  return {
    ...parts,
    eventCards: new EventCardCache(parts.upstream),
    eventNetworkTokens: new EventNetworkTokenCache(parts.upstream),
    binAttributes: new BinAttributesCache({
      ttlMs: 24 * 3_600_000,
      maxEntries: 10_000,
      maxWaitMs: config.upstream.timeoutMs,
    }),
    limits: config.operationLimits,
    servedVaults: Object.keys(config.upstream.credentials),
  };
}

/** Exports the spans still buffered and stops `tracing`; a failed export is logged, not thrown. */
export async function shutDownTracing(tracing: Tracing, logger: Logger): Promise<void> {
  await tracing
    .shutdown()
    .catch((error: unknown) =>
      logger.warn({ err: (error as Error).message }, 'trace export at shutdown failed'),
    );
}

/**
 * Opens the configured durable event backend (`EVENTS_BACKEND`) and returns what opens its log of
 * `kind`: SQLite in `DATA_DIR` for one gateway (one file, one read connection and one writer thread
 * for every log: src/events/sqlite-event-log.ts), Redis Streams shared by replicas; retention from
 * `EVENTS_RETENTION_*`, with `overrides` (the unmapped log's own, `UNMAPPED_*`). The sqlite file's
 * close is registered on `stack` here, so it runs after the logs' closes registered later.
 */
async function openEventLogs(
  config: Config,
  stack: AsyncDisposableStack,
  logger: Logger,
): Promise<
  <E extends LogEvent>(kind: EventLogKind<E>, overrides?: Partial<RetentionPolicy>) => Promise<EventLog<E>>
> {
  const retentionWith = (overrides: Partial<RetentionPolicy>): RetentionPolicy => ({
    maxAgeMs: config.events.retentionMaxAgeMs,
    maxCount: config.events.retentionMaxCount,
    // A replay is answered `duplicate` for as long as its signature verifies, whatever the retention.
    receiptMs: receiptPeriodMs(config.webhooks.toleranceS),
    ...overrides,
  });
  if (config.events.backend === 'redis') {
    // Loaded only for a Redis deployment (issue 21 item 2, cold start).
    const { createRedisEventLog } = await import('../events/redis-event-log.ts');
    return async (kind, overrides = {}) =>
      createRedisEventLog({
        url: config.events.redisUrl!,
        ...(config.events.redisSentinel ? { sentinel: config.events.redisSentinel } : {}),
        minReplicasAck: config.events.redisMinReplicasAck,
        replicasAckTimeoutMs: config.events.redisReplicasAckTimeoutMs,
        retention: retentionWith(overrides),
        logger,
        kind,
      });
  }
  const database = openSqliteEventDatabase({ dataDir: config.events.dataDir });
  stack.defer(() => database.close());
  return async (kind, overrides = {}) => database.openLog({ kind, retention: retentionWith(overrides) });
}

/**
 * The app-wide card read cache (`CARD_CACHE_*`, src/loaders/card-read-cache.ts), counting its
 * lookups in `cardgraph_card_read_cache_lookups_total{area,outcome}`.
 */
function createCardReads(
  settings: Config['cardCache'],
  metrics: Metrics,
  publish: CardInvalidationChannel['publish'],
): CardReadCache {
  const lookups = new Counter({
    name: 'cardgraph_card_read_cache_lookups_total',
    help: 'Card reads (card interface, account updater) answered from the app-wide cache (hit) or upstream (miss).',
    labelNames: ['area', 'outcome'] as const,
    registers: [metrics.registry],
  });
  return new CardReadCache({
    ttlMs: settings.ttlMs,
    maxEntries: settings.maxEntries,
    onLookup: (area, outcome) => lookups.inc({ area, outcome }),
    publish,
  });
}

/**
 * The channel carrying card changes to the other replicas' card read caches: Redis pub/sub on the
 * caches' Redis (`REDIS_CACHE_URL`, else `REDIS_URL`) with `EVENTS_BACKEND=redis`, else none (one
 * gateway, its cache dropped in process).
 */
async function openCardInvalidations(config: Config, logger: Logger): Promise<CardInvalidationChannel> {
  if (config.events.backend === 'redis') {
    return openRedisCardInvalidations({ url: config.events.cacheRedisUrl!, logger });
  }
  return createLocalCardInvalidations();
}

/**
 * The store of automatic persisted queries, within `APQ_MAX_ENTRIES` and `APQ_MAX_BYTES` (oldest
 * dropped) and `APQ_TTL_S`: in memory, or with `EVENTS_BACKEND=redis` in the caches' Redis
 * (`REDIS_CACHE_URL`, else `REDIS_URL`) so a hash registered through one replica answers on every
 * other. Disposing it closes its Redis connection.
 */
async function openApqStore(config: Config, logger: Logger): Promise<APQStore & AsyncDisposable> {
  const { apqTtlS, apqMaxEntries, apqMaxBytes } = config.persistedOperations;
  const limits = { ttlS: apqTtlS, maxEntries: apqMaxEntries, maxBytes: apqMaxBytes };
  if (config.events.backend === 'redis') {
    const store = await createRedisApqStore({ url: config.events.cacheRedisUrl!, ...limits, logger });
    return Object.assign(store, { [Symbol.asyncDispose]: () => store.close() });
  }
  const store = createMemoryApqStore(limits);
  return Object.assign(store, { [Symbol.asyncDispose]: async () => {} });
}
