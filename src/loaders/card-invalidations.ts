import { randomUUID } from 'node:crypto';
import { VAULT_ID_PATTERN } from '../auth/viewer.ts';
import type { Logger } from '../lib/logger.ts';
import { CARD_ID } from './card-read-cache.ts';

/** The Redis pub/sub channel of card changes, shared by every replica on one Redis. */
export const CARD_INVALIDATION_CHANNEL = 'cardgraph:card-invalidations';

/** Longest wait for Redis to take one card change (ms); then the mutation answers without it. */
export const PUBLISH_TIMEOUT_MS = 1_000;

/** A card a mutation changed: the vault (tenant) and card id (`CRD…`), never a card number. */
export interface CardChange {
  vaultId: string;
  cardId: string;
}

/**
 * Carries card changes to every replica (issue 20 item 2, read-your-writes behind a load balancer):
 * a mutation that changed a card publishes it, every replica's listener drops its cached reads of
 * that card. In process (one gateway) there is nobody else to tell; on Redis it is a pub/sub channel.
 */
export interface CardInvalidationChannel {
  /**
   * Tells every other replica that `change`'s card changed; resolves once Redis has handed the message
   * to every subscribed replica's connection (PUBLISH answered). A change of something other than a
   * `CRD…` id in a vault id is not sent (nothing caches it). Failures are logged, never thrown: the
   * upstream change succeeded, and `CARD_CACHE_TTL_MS` bounds what a replica that missed it serves.
   */
  publish(change: CardChange): Promise<void>;
  /** Calls `listener` with every change another replica publishes (from now on). */
  listen(listener: (change: CardChange) => void): void;
  /** Stops listening and closes the channel's connections. */
  close(): Promise<void>;
}

/** One gateway: no other replica holds a cache, so publishing tells nobody. */
export function createLocalCardInvalidations(): CardInvalidationChannel {
  return {
    publish: async () => {},
    listen: () => {},
    close: async () => {},
  };
}

/** Whether `change` names a vault id and a card id the card read cache could hold. */
function isCacheableChange(change: CardChange): boolean {
  return VAULT_ID_PATTERN.test(change.vaultId) && CARD_ID.test(change.cardId);
}

/**
 * Card changes over Redis pub/sub ({@link CARD_INVALIDATION_CHANNEL}) on `url` (the caches' Redis,
 * `REDIS_CACHE_URL` or `REDIS_URL`): one connection publishes, one subscribes. A message is JSON
 * `{"origin":<replica uuid>,"vaultId":…,"cardId":…}`; a replica ignores its own (it dropped the card
 * before publishing) and anything malformed. Pub/sub keeps nothing in Redis's memory, so it works on
 * a Redis at `maxmemory`. A replica disconnected while a change is published misses it (pub/sub does
 * not queue); node-redis resubscribes on reconnect and the TTL bounds the staleness.
 * @throws when Redis cannot be reached at start.
 */
export async function openRedisCardInvalidations(options: {
  url: string;
  logger: Logger;
}): Promise<CardInvalidationChannel> {
  const { logger } = options;
  const origin = randomUUID();
  // node-redis (570 modules) loads only for a Redis deployment, never at a one-gateway start.
  const { createClient } = await import('redis');
  // Offline, a publish fails at once instead of waiting in node-redis's queue for a reconnect, and
  // a Redis that does not answer costs a mutation at most PUBLISH_TIMEOUT_MS.
  const publisher = createClient({
    url: options.url,
    disableOfflineQueue: true,
    commandOptions: { timeout: PUBLISH_TIMEOUT_MS },
  });
  publisher.on('error', (error: Error) =>
    logger.error({ err: error.message }, 'redis card invalidation publisher error'),
  );
  const subscriber = createClient({ url: options.url });
  subscriber.on('error', (error: Error) =>
    logger.error({ err: error.message }, 'redis card invalidation subscriber error'),
  );
  await Promise.all([publisher.connect(), subscriber.connect()]);
  const listeners: ((change: CardChange) => void)[] = [];
  await subscriber.subscribe(CARD_INVALIDATION_CHANNEL, (message) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    const { origin: from, vaultId, cardId } = (parsed ?? {}) as Record<string, unknown>;
    if (from === origin || typeof vaultId !== 'string' || typeof cardId !== 'string') return;
    const change = { vaultId, cardId };
    if (!isCacheableChange(change)) return;
    for (const listener of listeners) listener(change);
  });
  return {
    async publish(change) {
      if (!isCacheableChange(change)) return;
      try {
        await publisher.publish(CARD_INVALIDATION_CHANNEL, JSON.stringify({ origin, ...change }));
      } catch (error) {
        // Ids only in the line: never a card number.
        logger.warn(
          { err: (error as Error).message, vaultId: change.vaultId, cardId: change.cardId },
          'card change not published to the other replicas',
        );
      }
    },
    listen(listener) {
      listeners.push(listener);
    },
    async close() {
      listeners.length = 0;
      await Promise.allSettled([
        subscriber.isOpen ? subscriber.close() : undefined,
        publisher.isOpen ? publisher.close() : undefined,
      ]);
    },
  };
}
