import type { Viewer } from './auth/viewer.ts';
import type { Config } from './config/index.ts';
import type { CardEventStream } from './events/card-event-stream.ts';
import type { NetworkTokenEventStream } from './events/network-token-event-stream.ts';
import type { UnmappedNotificationStore } from './events/unmapped-notification.ts';
import type { Logger } from './lib/logger.ts';
import type { BinAttributesCache } from './loaders/bin-attributes-cache.ts';
import type { CardReadCache } from './loaders/card-read-cache.ts';
import {
  type EventCardCache,
  type EventNetworkTokenCache,
  type Loaders,
  RequestLoaders,
} from './loaders/index.ts';
import { type Upstream, UpstreamCallBudget } from './upstream/index.ts';

/** Long-lived services the context is built from (src/runtime/services.ts). */
export interface ContextServices {
  upstream: Upstream;
  binAttributes: BinAttributesCache;
  /** App-wide card reads, dropped by card events and by mutations of the card. */
  cardReads: CardReadCache;
  events: CardEventStream;
  eventCards: EventCardCache;
  networkTokenEvents: NetworkTokenEventStream;
  eventNetworkTokens: EventNetworkTokenCache;
  /** Signed notifications that could not be mapped, for operators (`Query.unmappedNotifications`). */
  unmappedNotifications: UnmappedNotificationStore;
  logger: Logger;
  /** What one operation may ask for (src/config/limits.ts). */
  limits: Config['operationLimits'];
  /**
   * The vaults the gateway serves (the vault ids of `UPSTREAM_CREDENTIALS`): a token naming every
   * one of them is a token of the whole gateway (src/schema/unmapped-notification.ts).
   */
  servedVaults: readonly string[];
}

/**
 * Per-operation GraphQL context (one per HTTP request, one per graphql-ws subscribe): the
 * {@link ContextServices}, with `upstream` charged to this operation's budget, and:
 * - `viewer`: the verified client token, or null when none was sent.
 * - `loaders`: per-request DataLoaders (src/loaders); never shared across requests.
 * Of the services, `eventCards` is the app-wide, per-event memo so `CardEvent.card` is fetched once
 * per event for all subscribers of its vault; `networkTokenEvents` the durable stream of network
 * token notifications (live, resume, history); `eventNetworkTokens` the app-wide, per-event memo so
 * `NetworkTokenEvent.token` is fetched once per event for all subscribers of its vault.
 */
export interface GraphQLContext extends ContextServices {
  viewer: Viewer | null;
  loaders: Loaders;
  /**
   * Upstream calls this operation may still make; `upstream` and `loaders` charge it
   * (src/upstream/budget.ts). App-wide per-event memos (`eventCards`, `eventNetworkTokens`) read
   * once per event for every subscriber, so they are not charged to any one of them.
   */
  upstreamBudget: UpstreamCallBudget;
  /**
   * Set on the context of a shared live execution (src/live/): how many subscribers it serves now.
   * Its event subscription counts as that many in the bus's subscriber count.
   */
  liveSubscribers?: () => number;
}

/** Builds a fresh context for one operation, with its own upstream call budget. */
export function createContext(services: ContextServices, viewer: Viewer | null): GraphQLContext {
  const upstreamBudget = new UpstreamCallBudget(services.limits.upstreamCallBudget);
  const upstream = services.upstream.withBudget(upstreamBudget);
  return {
    ...services,
    viewer,
    upstream,
    upstreamBudget,
    // Each DataLoader is made on its first use (RequestLoaders' getters).
    loaders: new RequestLoaders(upstream, services.binAttributes, services.cardReads),
  };
}
