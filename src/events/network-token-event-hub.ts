import { createInMemoryBus, type InMemoryBusLimits, type PublishOutcome } from './card-event-bus.ts';
import type { NetworkTokenEvent } from './network-token-event.ts';

/**
 * Which network token events a subscriber receives.
 * - `tenants`: vault ids (at least one); an event is delivered only to subscribers naming its tenant.
 * - `panAlias`: only events whose `panAlias` is exactly this alias, when set. A notification names
 *   the alias provisioning was requested with, so a token provisioned through its `tok_` alias is not
 *   matched by the card's format-preserving alias (gap decisions, "Network tokens": identity).
 */
export interface NetworkTokenEventFilter {
  tenants: readonly string[];
  panAlias?: string;
}

/** Options of {@link createNetworkTokenEventHub}: per-subscriber buffer and duplicate-id memory. */
export type NetworkTokenEventHubOptions = InMemoryBusLimits;

/**
 * Fan-out of validated network token notifications (gap decisions, "Network token notifications") to
 * the live subscribers of their tenant.
 */
export interface NetworkTokenEventHub {
  /**
   * Delivers `event` to every matching subscriber, unless an event with the same `id` was published
   * recently (the sender delivers at least once, contract §4).
   * @returns `'published'`, or `'duplicate'` when the id was seen and nothing was delivered.
   */
  publish(event: NetworkTokenEvent): Promise<PublishOutcome>;
  /**
   * Live events matching `filter`, from now on (no replay, no history). Ends when `signal` aborts or
   * the iterator's `return()` is called, both of which unsubscribe at once.
   * @throws TypeError when `filter.tenants` is empty.
   * @returns an iterator whose `next()` rejects with SlowSubscriberError (`subscriber-overflow`) when
   *   the subscriber fell more than `maxBufferedEvents` events behind.
   */
  subscribe(filter: NetworkTokenEventFilter, signal?: AbortSignal): AsyncIterableIterator<NetworkTokenEvent>;
  /** Live subscribers, of `tenant` only when given. */
  subscriberCount(tenant?: string): number;
  /** Ends every subscription (their iterators finish) and refuses new ones: graceful shutdown. */
  close(): void;
}

/**
 * In-process {@link NetworkTokenEventHub}, built on the generic bus of card events
 * (`createInMemoryBus`, subject = `panAlias`):
 * - subscribers are indexed by tenant; every subscriber receives the same frozen event instance;
 * - each subscriber buffers at most `maxBufferedEvents` (default 1,000), one more ends it with
 *   SlowSubscriberError;
 * - the last `dedupeCapacity` (default 10,000) notification ids are kept in an LRU; a repeat is not
 *   delivered.
 *
 * Limitation: network token events are not written to the durable card event log. They are lost on
 * restart, cannot be replayed or paged, and are not shared between processes: with
 * `EVENTS_BACKEND=redis`, a network token notification reaches the subscribers of the replica that
 * received the webhook only (docs/gap-decisions.md, "Gateway").
 * @throws RangeError when a limit is not a positive integer.
 */
export function createNetworkTokenEventHub(options: NetworkTokenEventHubOptions = {}): NetworkTokenEventHub {
  const bus = createInMemoryBus<NetworkTokenEvent>({ ...options, subjectOf: (event) => event.panAlias });
  return {
    publish: (event) => bus.publish(event),
    subscribe: (filter, signal) =>
      bus.subscribe(
        {
          tenants: filter.tenants,
          ...(filter.panAlias !== undefined ? { subject: filter.panAlias } : {}),
        },
        signal,
      ),
    subscriberCount: (tenant) => bus.subscriberCount(tenant),
    close: () => bus.close(),
  };
}
