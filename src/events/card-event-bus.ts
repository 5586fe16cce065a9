import type { CardEvent } from './card-event.ts';

/**
 * Which events a subscriber receives.
 * - `tenants`: vault ids (at least one); an event is delivered only to subscribers naming its tenant.
 * - `cardId`: only events of this card (`details.card_id`) when set.
 * - `types`: only these event kinds (`au_card.*`) when set; an empty list matches nothing.
 */
export interface CardEventFilter {
  tenants: readonly string[];
  cardId?: string;
  types?: readonly string[];
}

/** What {@link CardEventBus.publish} did with an event. */
export type PublishOutcome = 'published' | 'duplicate';

/**
 * Fan-out of validated card lifecycle notifications (specification "Events") to live subscribers.
 * The in-process implementation is {@link createInMemoryCardEventBus}; durable ones share this
 * interface.
 */
export interface CardEventBus {
  /**
   * Delivers `event` to every matching subscriber, unless an event with the same `id` was published
   * recently (the sender delivers at least once, contract §4).
   * @returns `'published'`, or `'duplicate'` when the id was seen and nothing was delivered.
   */
  publish(event: CardEvent): Promise<PublishOutcome>;
  /**
   * Live events matching `filter`, from now on (no replay). Ends when `signal` aborts or the
   * iterator's `return()` is called, both of which unsubscribe.
   * @throws TypeError when `filter.tenants` is empty.
   * @returns an iterator whose `next()` rejects with {@link SlowSubscriberError} when the subscriber
   *   fell too far behind.
   */
  subscribe(filter: CardEventFilter, signal?: AbortSignal): AsyncIterableIterator<CardEvent>;
}

/**
 * Ends a subscription whose consumer did not keep up: more than the bus's buffer limit of events were
 * waiting for it. The buffered events are dropped with it. `code` is `subscriber-overflow`.
 */
export class SlowSubscriberError extends Error {
  override name = 'SlowSubscriberError';
  readonly code = 'subscriber-overflow';
  constructor(limit: number) {
    super(`The subscriber fell more than ${limit} events behind and was ended`);
  }
}

/** Options of {@link createInMemoryCardEventBus}; counts are numbers of events or ids. */
export interface InMemoryCardEventBusOptions {
  /** Events buffered per subscriber before it is ended with SlowSubscriberError; default 1,000. */
  maxBufferedEvents?: number;
  /** Notification ids remembered for duplicate detection (least recently seen dropped); default 10,000. */
  dedupeCapacity?: number;
}

/** The in-process bus, with a count of live subscribers for health checks and tests. */
export interface InMemoryCardEventBus extends CardEventBus {
  /** Live subscribers, of `tenant` only when given. */
  subscriberCount(tenant?: string): number;
  /** Ends every subscription (their iterators finish) and refuses new ones: graceful shutdown. */
  close(): void;
}

type Pending = { resolve: (result: IteratorResult<CardEvent>) => void; reject: (error: unknown) => void };

class Subscriber {
  readonly filter: {
    tenants: readonly string[];
    cardId: string | undefined;
    types: ReadonlySet<string> | undefined;
  };
  readonly buffer: CardEvent[] = [];
  /** next() calls waiting for an event, oldest first (consumers may call next() before awaiting). */
  readonly pending: Pending[] = [];
  failure: Error | undefined;
  done = false;

  constructor(filter: CardEventFilter) {
    this.filter = {
      tenants: [...new Set(filter.tenants)],
      cardId: filter.cardId,
      types: filter.types ? new Set(filter.types) : undefined,
    };
  }

  matches(event: CardEvent): boolean {
    if (this.filter.cardId !== undefined && event.cardId !== this.filter.cardId) return false;
    if (this.filter.types !== undefined && !this.filter.types.has(event.type)) return false;
    return true;
  }
}

/**
 * In-process {@link CardEventBus}.
 * - Subscribers are indexed by tenant, so a publish touches only the subscribers of the event's tenant.
 * - Every subscriber receives the same (frozen) event instance.
 * - Each subscriber buffers at most `maxBufferedEvents`; one more ends it with SlowSubscriberError
 *   (its buffer is dropped) instead of growing without bound.
 * - The last `dedupeCapacity` notification ids are kept in an LRU; a repeat is not delivered.
 * Events are lost on restart and are not shared between processes.
 */
export function createInMemoryCardEventBus(options: InMemoryCardEventBusOptions = {}): InMemoryCardEventBus {
  const maxBuffered = options.maxBufferedEvents ?? 1_000;
  const dedupeCapacity = options.dedupeCapacity ?? 10_000;
  if (!Number.isInteger(maxBuffered) || maxBuffered < 1)
    throw new RangeError('maxBufferedEvents must be ≥ 1');
  if (!Number.isInteger(dedupeCapacity) || dedupeCapacity < 1)
    throw new RangeError('dedupeCapacity must be ≥ 1');

  const byTenant = new Map<string, Set<Subscriber>>();
  let closed = false;
  // Map iteration follows insertion order; re-inserting on a hit makes the first key the least recent.
  const recentIds = new Map<string, true>();

  function remember(id: string): boolean {
    if (recentIds.has(id)) {
      recentIds.delete(id);
      recentIds.set(id, true);
      return false;
    }
    recentIds.set(id, true);
    if (recentIds.size > dedupeCapacity) {
      const oldest = recentIds.keys().next();
      if (!oldest.done) recentIds.delete(oldest.value);
    }
    return true;
  }

  function detach(subscriber: Subscriber): void {
    for (const tenant of subscriber.filter.tenants) {
      const set = byTenant.get(tenant);
      if (!set) continue;
      set.delete(subscriber);
      if (set.size === 0) byTenant.delete(tenant);
    }
  }

  function end(subscriber: Subscriber): void {
    if (subscriber.done) return;
    subscriber.done = true;
    subscriber.buffer.length = 0;
    detach(subscriber);
    for (const pending of subscriber.pending.splice(0)) pending.resolve({ value: undefined, done: true });
  }

  function fail(subscriber: Subscriber, error: Error): void {
    if (subscriber.done) return;
    subscriber.done = true;
    subscriber.buffer.length = 0;
    detach(subscriber);
    const [first, ...rest] = subscriber.pending.splice(0);
    if (first) first.reject(error);
    else subscriber.failure = error;
    for (const pending of rest) pending.resolve({ value: undefined, done: true });
  }

  function deliver(subscriber: Subscriber, event: CardEvent): void {
    const pending = subscriber.pending.shift();
    if (pending) {
      pending.resolve({ value: event, done: false });
      return;
    }
    if (subscriber.buffer.length >= maxBuffered) {
      fail(subscriber, new SlowSubscriberError(maxBuffered));
      return;
    }
    subscriber.buffer.push(event);
  }

  return {
    async publish(event) {
      if (!remember(event.id)) return 'duplicate';
      const subscribers = byTenant.get(event.tenant);
      if (!subscribers) return 'published';
      // A copy: fail() may remove a subscriber from the set during delivery.
      for (const subscriber of [...subscribers]) {
        if (subscriber.matches(event)) deliver(subscriber, event);
      }
      return 'published';
    },

    subscribe(filter, signal) {
      if (filter.tenants.length === 0) throw new TypeError('filter.tenants must name at least one tenant');
      const subscriber = new Subscriber(filter);
      const onAbort = () => end(subscriber);

      if (signal?.aborted || closed) {
        subscriber.done = true;
      } else {
        for (const tenant of subscriber.filter.tenants) {
          let set = byTenant.get(tenant);
          if (!set) {
            set = new Set();
            byTenant.set(tenant, set);
          }
          set.add(subscriber);
        }
        signal?.addEventListener('abort', onAbort, { once: true });
      }

      const finish = (): Promise<IteratorResult<CardEvent>> => {
        signal?.removeEventListener('abort', onAbort);
        end(subscriber);
        return Promise.resolve({ value: undefined, done: true });
      };

      const iterator: AsyncIterableIterator<CardEvent> = {
        next() {
          const buffered = subscriber.buffer.shift();
          if (buffered) return Promise.resolve({ value: buffered, done: false });
          if (subscriber.failure) {
            const failure = subscriber.failure;
            subscriber.failure = undefined;
            signal?.removeEventListener('abort', onAbort);
            return Promise.reject(failure);
          }
          if (subscriber.done) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve, reject) => {
            subscriber.pending.push({ resolve, reject });
          });
        },
        return: finish,
        throw(error?: unknown) {
          signal?.removeEventListener('abort', onAbort);
          end(subscriber);
          return Promise.reject(error);
        },
        [Symbol.asyncIterator]() {
          return iterator;
        },
      };
      return iterator;
    },

    close() {
      closed = true;
      const all = new Set<Subscriber>();
      for (const set of byTenant.values()) for (const subscriber of set) all.add(subscriber);
      for (const subscriber of all) end(subscriber);
    },

    subscriberCount(tenant) {
      if (tenant !== undefined) return byTenant.get(tenant)?.size ?? 0;
      const all = new Set<Subscriber>();
      for (const set of byTenant.values()) for (const subscriber of set) all.add(subscriber);
      return all.size;
    },
  };
}
