import { entryBoundedCache } from '../lib/lru.ts';
import type { CardEvent } from './card-event.ts';

/**
 * How many subscribers one bus subscription stands for, read each time the bus counts them: a shared
 * live execution (src/live/) subscribes once for all its members and passes the count of them. A
 * subscription without one counts as one.
 */
export type SubscriberWeight = () => number;

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

/** Limits of an in-process bus; counts are numbers of events or ids. */
export interface InMemoryBusLimits {
  /** Events buffered per subscriber before it is ended with SlowSubscriberError; default 1,000. */
  maxBufferedEvents?: number;
  /** Notification ids remembered for duplicate detection (least recently seen dropped); default 10,000. */
  dedupeCapacity?: number;
}

/** Options of {@link createInMemoryCardEventBus}: the limits of {@link InMemoryBusLimits}. */
export type InMemoryCardEventBusOptions = InMemoryBusLimits;

/** The in-process bus, with a count of live subscribers for health checks and tests. */
export interface InMemoryCardEventBus extends CardEventBus {
  /** Live subscribers, of `tenant` only when given. */
  subscriberCount(tenant?: string): number;
  /** Ends every subscription (their iterators finish) and refuses new ones: graceful shutdown. */
  close(): void;
}

/** What every event an {@link InMemoryBus} carries has: notification id, tenant (vault id), kind. */
export interface BusEvent {
  readonly id: string;
  readonly tenant: string;
  readonly type: string;
}

/**
 * Which events a subscriber of an {@link InMemoryBus} receives.
 * - `tenants`: vault ids (at least one); an event is delivered only to subscribers naming its tenant.
 * - `subject`: only events whose subject (the bus's `subjectOf`, e.g. a card id) equals it, when set.
 * - `types`: only these event kinds when set; an empty list matches nothing.
 */
export interface BusFilter {
  tenants: readonly string[];
  subject?: string;
  types?: readonly string[];
}

/** Options of {@link createInMemoryBus}. */
export interface InMemoryBusOptions<E extends BusEvent> extends InMemoryBusLimits {
  /** The subject `BusFilter.subject` is compared with (e.g. the card id of a card event). */
  subjectOf: (event: E) => string;
  /**
   * Whether `publish` drops an id seen recently (default true). False where the publisher hands each
   * event over exactly once already (a durable stream's log tail: the log drops repeated ids before
   * they are logged, and each resuming subscriber skips positions it has seen), which spares a
   * lookup and an insert in the LRU per event (issue 21 item 4).
   */
  dedupe?: boolean;
}

/**
 * An in-process fan-out of events of type `E` by tenant; {@link createInMemoryBus}.
 * - `publish`: delivers to every matching subscriber unless the id was seen recently; `duplicate`
 *   then, else `published`.
 * - `subscribe`: live events from now on (no replay); ends when `signal` aborts or the iterator's
 *   `return()` is called, both of which unsubscribe at once. @throws TypeError when `filter.tenants`
 *   is empty. `next()` rejects with {@link SlowSubscriberError} when the subscriber fell too far
 *   behind.
 * - `subscriberCount`: live subscribers, of `tenant` only when given.
 * - `close`: ends every subscription (their iterators finish) and refuses new ones.
 */
export interface InMemoryBus<E extends BusEvent> {
  publish(event: E): Promise<PublishOutcome>;
  subscribe(filter: BusFilter, signal?: AbortSignal, weight?: SubscriberWeight): AsyncIterableIterator<E>;
  subscriberCount(tenant?: string): number;
  close(): void;
}

type Pending<E> = { resolve: (result: IteratorResult<E>) => void; reject: (error: unknown) => void };

class Subscriber<E extends BusEvent> {
  readonly filter: {
    tenants: readonly string[];
    subject: string | undefined;
    types: ReadonlySet<string> | undefined;
  };
  readonly buffer: E[] = [];
  /** next() calls waiting for an event, oldest first (consumers may call next() before awaiting). */
  readonly pending: Pending<E>[] = [];
  failure: Error | undefined;
  done = false;
  /** Subscribers this one stands for (see {@link SubscriberWeight}); one when undefined. */
  readonly weight: SubscriberWeight | undefined;

  constructor(filter: BusFilter, weight: SubscriberWeight | undefined) {
    this.weight = weight;
    this.filter = {
      tenants: [...new Set(filter.tenants)],
      subject: filter.subject,
      types: filter.types ? new Set(filter.types) : undefined,
    };
  }

  matches(event: E, subjectOf: (event: E) => string): boolean {
    if (this.filter.subject !== undefined && subjectOf(event) !== this.filter.subject) return false;
    if (this.filter.types !== undefined && !this.filter.types.has(event.type)) return false;
    return true;
  }
}

/**
 * In-process {@link InMemoryBus} of any event kind with an id, a tenant and a type.
 * - Subscribers are indexed by tenant, so a publish touches only the subscribers of the event's tenant.
 * - Every subscriber receives the same (frozen) event instance.
 * - Each subscriber buffers at most `maxBufferedEvents`; one more ends it with SlowSubscriberError
 *   (its buffer is dropped) instead of growing without bound.
 * - Unless `dedupe` is false, the last `dedupeCapacity` (tenant, notification id) pairs are kept in
 *   an LRU; a repeat is not delivered (the same id in another vault is another event).
 * Events are lost on restart and are not shared between processes.
 * @throws RangeError when a limit is not a positive integer.
 */
export function createInMemoryBus<E extends BusEvent>(options: InMemoryBusOptions<E>): InMemoryBus<E> {
  const { subjectOf } = options;
  const maxBuffered = options.maxBufferedEvents ?? 1_000;
  const dedupeCapacity = options.dedupeCapacity ?? 10_000;
  if (!Number.isInteger(maxBuffered) || maxBuffered < 1)
    throw new RangeError('maxBufferedEvents must be ≥ 1');
  if (!Number.isInteger(dedupeCapacity) || dedupeCapacity < 1)
    throw new RangeError('dedupeCapacity must be ≥ 1');

  const byTenant = new Map<string, Set<Subscriber<E>>>();
  let closed = false;
  // Least recently seen dropped. lru-cache, not a Map that drops its first key per insert: V8 keeps
  // deleted entries at a Map's front until it rehashes, so that walk costs microseconds per event.
  const recentIds = options.dedupe === false ? undefined : entryBoundedCache<string, true>(dedupeCapacity);

  function remember(id: string): boolean {
    if (!recentIds) return true;
    // `get` makes a seen id the most recent again.
    if (recentIds.get(id)) return false;
    recentIds.set(id, true);
    return true;
  }

  function detach(subscriber: Subscriber<E>): void {
    for (const tenant of subscriber.filter.tenants) {
      const set = byTenant.get(tenant);
      if (!set) continue;
      set.delete(subscriber);
      if (set.size === 0) byTenant.delete(tenant);
    }
  }

  function end(subscriber: Subscriber<E>): void {
    if (subscriber.done) return;
    subscriber.done = true;
    subscriber.buffer.length = 0;
    detach(subscriber);
    for (const pending of subscriber.pending.splice(0)) pending.resolve({ value: undefined, done: true });
  }

  function fail(subscriber: Subscriber<E>, error: Error): void {
    if (subscriber.done) return;
    subscriber.done = true;
    subscriber.buffer.length = 0;
    detach(subscriber);
    const [first, ...rest] = subscriber.pending.splice(0);
    if (first) first.reject(error);
    else subscriber.failure = error;
    for (const pending of rest) pending.resolve({ value: undefined, done: true });
  }

  function deliver(subscriber: Subscriber<E>, event: E): void {
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
      if (recentIds && !remember(`${event.tenant}\u0000${event.id}`)) return 'duplicate';
      const subscribers = byTenant.get(event.tenant);
      if (!subscribers) return 'published';
      // A copy: fail() may remove a subscriber from the set during delivery.
      for (const subscriber of [...subscribers]) {
        if (subscriber.matches(event, subjectOf)) deliver(subscriber, event);
      }
      return 'published';
    },

    subscribe(filter, signal, weight) {
      if (filter.tenants.length === 0) throw new TypeError('filter.tenants must name at least one tenant');
      const subscriber = new Subscriber<E>(filter, weight);
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

      const finish = (): Promise<IteratorResult<E>> => {
        signal?.removeEventListener('abort', onAbort);
        end(subscriber);
        return Promise.resolve({ value: undefined, done: true });
      };

      const iterator: AsyncIterableIterator<E> = {
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
      const all = new Set<Subscriber<E>>();
      for (const set of byTenant.values()) for (const subscriber of set) all.add(subscriber);
      for (const subscriber of all) end(subscriber);
    },

    subscriberCount(tenant) {
      const count = (subscribers: Iterable<Subscriber<E>>) => {
        let n = 0;
        for (const subscriber of subscribers) n += subscriber.weight ? subscriber.weight() : 1;
        return n;
      };
      if (tenant !== undefined) return count(byTenant.get(tenant) ?? []);
      const all = new Set<Subscriber<E>>();
      for (const set of byTenant.values()) for (const subscriber of set) all.add(subscriber);
      return count(all);
    },
  };
}

/**
 * In-process {@link CardEventBus}: {@link createInMemoryBus} over card events, `CardEventFilter.cardId`
 * compared with `details.card_id`. Same guarantees and limits (per-tenant index, one frozen instance
 * for all subscribers, bounded buffers, duplicate ids dropped). Events are lost on restart and are not
 * shared between processes.
 * @throws RangeError when a limit is not a positive integer.
 */
export function createInMemoryCardEventBus(options: InMemoryCardEventBusOptions = {}): InMemoryCardEventBus {
  const bus = createInMemoryBus<CardEvent>({ ...options, subjectOf: (event) => event.cardId ?? '' });
  return {
    publish: (event) => bus.publish(event),
    subscribe: (filter, signal) =>
      bus.subscribe(
        {
          tenants: filter.tenants,
          ...(filter.cardId !== undefined ? { subject: filter.cardId } : {}),
          ...(filter.types !== undefined ? { types: filter.types } : {}),
        },
        signal,
      ),
    subscriberCount: (tenant) => bus.subscriberCount(tenant),
    close: () => bus.close(),
  };
}
