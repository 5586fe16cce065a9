import { performance } from 'node:perf_hooks';
import type { SpanContext, Tracer } from '@opentelemetry/api';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { context, trace } from '../lib/otel-api.ts';
import { recordSpanFailure } from '../lib/tracing.ts';
import type { CardEvent } from './card-event.ts';
import {
  type CardEventBus,
  type CardEventFilter,
  createInMemoryBus,
  type PublishOutcome,
  type SubscriberWeight,
} from './card-event-bus.ts';
import {
  CARD_EVENT_LOG,
  type CardEventLog,
  cardLogFilter,
  type EventLog,
  type EventLogFilter,
  type EventLogKind,
  type HistoryCursor,
  type LogEvent,
  type Logged,
  type LoggedCardEvent,
} from './event-log.ts';

/** Options of {@link createCardEventStream}. */
export interface CardEventStreamOptions {
  log: CardEventLog;
  logger: Logger;
  /** How often retention runs (ms); default 60 s. */
  trimIntervalMs?: number;
  /** Events buffered per live subscriber before it is ended; default 1,000. */
  maxBufferedEvents?: number;
  /**
   * Append latency (`cardgraph_event_log_append_duration_seconds`, labelled `backend`) and delivery
   * lag (`cardgraph_event_delivery_lag_seconds`) are recorded here when given.
   */
  metrics?: Metrics;
  /** `sqlite` or `redis`: the `backend` label. */
  backend?: string;
  /** `event_log append` spans (children of the webhook request) and `card_event fan-out` spans. */
  tracer?: Tracer;
  /**
   * Called with every entry of the log's tail (this replica's appends and, on Redis, every other
   * replica's) before it is delivered to subscribers: the card read cache drops the event's card.
   */
  onEvent?: (event: LoggedCardEvent) => void;
}

/**
 * Card events end to end: the webhook receiver appends through `publish` (answered only once the
 * log holds the event durably), the log's tail fans each entry out once per process to an
 * in-process bus indexed by tenant, and subscribers can resume from a cursor with no gap and no
 * duplicate at the seam.
 */
export interface CardEventStream extends CardEventBus {
  /**
   * Durably appends `event` (deduplicated by notification id). Subscribers of this and every other
   * replica receive it through the log's tail.
   * @returns `published` or `duplicate` (already in the log; nothing is written or delivered).
   */
  publish(event: CardEvent): Promise<PublishOutcome>;
  /**
   * Live events from now on, or, with `after`, every retained event after that log position first
   * (replay) and then live ones, each exactly once.
   */
  resume(
    filter: CardEventFilter,
    after: bigint | null,
    weight?: SubscriberWeight,
  ): AsyncIterableIterator<LoggedCardEvent>;
  /** History page ordered by event timestamp (then log position), after the cursor. */
  history(filter: CardEventFilter, after: HistoryCursor | null, limit: number): Promise<LoggedCardEvent[]>;
  /**
   * The retained events of `tenant` with these notification ids, in no particular order (none for
   * an id not logged for that tenant); one log read (src/events/event-log.ts `byIds`).
   */
  byIds(tenant: string, ids: readonly string[]): Promise<LoggedCardEvent[]>;
  /** Live subscribers, of `tenant` only when given. */
  subscriberCount(tenant?: string): number;
  /**
   * Resolves when the log's backend answers (readiness; see {@link CardEventLog.ping}) and its latest
   * append did not fail in the last {@link APPEND_FAILURE_HOLD_MS}.
   * @throws EventLogAppendFailingError (code `append-failed`) while appends fail.
   */
  ping(): Promise<void>;
  /** Ends every subscription, waits for appends in flight, stops retention and closes the log. */
  close(): Promise<void>;
}

/**
 * A durable event stream of any {@link EventLogKind} (card events, network token notifications):
 * `publish` appends durably (deduplicated by tenant and id), the log's tail fans each entry out once
 * per process, `resume` replays after a position then goes live with no gap and no duplicate,
 * `history` pages by (timestamp, position). Filters name the kind's subject.
 */
export interface EventStream<E extends LogEvent> {
  publish(event: E): Promise<PublishOutcome>;
  subscribe(filter: EventLogFilter, signal?: AbortSignal): AsyncIterableIterator<Logged<E>>;
  /** `weight`: how many subscribers the live part counts as (a shared live execution's members). */
  resume(
    filter: EventLogFilter,
    after: bigint | null,
    weight?: SubscriberWeight,
  ): AsyncIterableIterator<Logged<E>>;
  history(filter: EventLogFilter, after: HistoryCursor | null, limit: number): Promise<Logged<E>[]>;
  /** See {@link EventLog.byIds}. */
  byIds(tenant: string, ids: readonly string[]): Promise<Logged<E>[]>;
  subscriberCount(tenant?: string): number;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link createEventStream}: those of a card event stream, for a log of `kind`. */
export interface EventStreamOptions<E extends LogEvent>
  extends Omit<CardEventStreamOptions, 'log' | 'onEvent'> {
  log: EventLog<E>;
  kind: EventLogKind<E>;
  /** See {@link CardEventStreamOptions.onEvent}. */
  onEvent?: (event: Logged<E>) => void;
}

const REPLAY_PAGE = 500;
/**
 * How long after a failed append (with none succeeding since) `ping` fails (ms): readiness reports
 * the log cannot append (issue 20 item 1), then clears on its own so a replica whose log recovered
 * while no webhook arrived is taken back by its balancer; the provider's retry tests it again.
 */
export const APPEND_FAILURE_HOLD_MS = 10_000;

/** Thrown by `ping` while appends fail: readiness shows the constant code `append-failed`. */
export class EventLogAppendFailingError extends Error {
  override name = 'EventLogAppendFailingError';
  readonly code = 'append-failed';
}
/** Receipts remembered for delivery lag and fan-out span parents; the oldest are forgotten first. */
const MAX_TRACKED_RECEIPTS = 10_000;

/** When and in which trace this process received a notification (by notification id). */
interface Receipt {
  receivedAtMs: number;
  spanContext: SpanContext | undefined;
}

/**
 * The values of at least the last `max / 2` and at most the last `max` keys set: two generations of
 * Maps, the older dropped whole when the newer fills. One Map insert per key and no eviction walk (an
 * LRU's bookkeeping costs more per webhook); no recency is needed: receipts are read only while their
 * event is fanned out, and a repeated notification comes back within seconds (a provider's retry).
 */
class Recent<V> {
  #current = new Map<string, V>();
  #previous = new Map<string, V>();
  readonly #generation: number;

  constructor(max: number) {
    this.#generation = Math.max(1, Math.floor(max / 2));
  }

  set(id: string, value: V): void {
    if (this.#current.size >= this.#generation) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    this.#current.set(id, value);
  }

  peek(id: string): V | undefined {
    return this.#current.get(id) ?? this.#previous.get(id);
  }
}

/** Builds the stream and positions the log's tail; see {@link CardEventStream}. */
export async function createCardEventStream(options: CardEventStreamOptions): Promise<CardEventStream> {
  const stream = await createEventStream({ ...options, kind: CARD_EVENT_LOG });
  return {
    ...stream,
    subscribe: (filter, signal) => stream.subscribe(cardLogFilter(filter), signal),
    resume: (filter, after, weight) => stream.resume(cardLogFilter(filter), after, weight),
    history: (filter, after, limit) => stream.history(cardLogFilter(filter), after, limit),
  };
}

/** Builds a durable stream over `options.log` and positions its tail; see {@link EventStream}. */
export async function createEventStream<E extends LogEvent>(
  options: EventStreamOptions<E>,
): Promise<EventStream<E>> {
  const { log, logger, metrics, tracer, kind } = options;
  const backend = options.backend ?? 'unknown';
  const bus = createInMemoryBus<Logged<E>>({
    maxBufferedEvents: options.maxBufferedEvents ?? 1_000,
    // The log drops repeated ids before its tail sees them, and `resume` skips positions already
    // delivered: the bus need not remember ids too.
    dedupe: false,
    subjectOf: (event) => kind.subjectOf(event),
  });
  const label = kind.name === 'card_events' ? 'card_event' : 'network_token_event';
  // Bounded by generations (see Recent), not a Map that drops its first key per insert: V8
  // keeps deleted entries at a Map's front until it rehashes, so that walk costs microseconds.
  const receipts = new Recent<Receipt>(MAX_TRACKED_RECEIPTS);
  // (tenant, notification id) of the events the tail handed over lately. The log drops a repeated id
  // before it is logged, but a Redis failover can hand the tail one entry twice under two positions:
  // the old primary's copy, read by the tail but never replicated (its append was refused and the
  // provider retried), then the retried append on the new primary. A subscriber gets it once.
  const tailed = new Recent<true>(MAX_TRACKED_RECEIPTS);
  const stopTail = await log.tail((event) => {
    const key = `${event.tenant}\u0000${event.id}`;
    if (tailed.peek(key)) {
      logger.warn(
        { id: event.id, log: kind.name },
        'event log tail repeated a notification; not delivered again',
      );
      return;
    }
    tailed.set(key, true);
    options.onEvent?.(event);
    if (!tracer) {
      void bus.publish(event);
      return;
    }
    // One span per event and process: the fan-out to every local subscriber. In the process that
    // received the webhook it joins the webhook's trace.
    const receipt = receipts.peek(event.id);
    const parent = receipt?.spanContext
      ? trace.setSpanContext(context.active(), receipt.spanContext)
      : context.active();
    const span = tracer.startSpan(
      `${label} fan-out`,
      {
        attributes: {
          'cardgraph.event.type': event.type,
          'cardgraph.subscribers': bus.subscriberCount(event.tenant),
        },
      },
      parent,
    );
    void bus.publish(event).finally(() => span.end());
  });

  /** Records the lag of a live event handed to a subscriber (receipt here, or append elsewhere). */
  function delivered(event: Logged<E>): void {
    if (!metrics) return;
    const since = receipts.peek(event.id)?.receivedAtMs ?? log.appendedAtMs?.(event);
    if (since !== undefined) metrics.deliveryLag.observe(Math.max(0, Date.now() - since) / 1000);
  }
  const inFlight = new Set<Promise<unknown>>();
  /** When the latest append failed (ms since the epoch), none succeeding since; undefined when fine. */
  let appendFailedAtMs: number | undefined;
  metrics?.eventLogAppendFailing.set({ log: kind.name }, 0);
  const trimTimer = setInterval(() => {
    log.trim().then(
      (dropped) => dropped > 0 && logger.info({ dropped, log: kind.name }, 'event retention applied'),
      (error: unknown) =>
        logger.error({ err: (error as Error).message, log: kind.name }, 'event retention failed'),
    );
  }, options.trimIntervalMs ?? 60_000);
  trimTimer.unref();
  let closing = false;

  function resume(
    filter: EventLogFilter,
    after: bigint | null,
    weight?: SubscriberWeight,
  ): AsyncIterableIterator<Logged<E>> {
    // Subscribe to live events before reading history, so nothing falls between the two; entries
    // seen in both are dropped by position.
    const live = bus.subscribe(filter, undefined, weight);
    let last = after;
    let replay: Logged<E>[] = [];
    let replaying = after !== null;
    let finished = false;

    async function next(): Promise<IteratorResult<Logged<E>>> {
      while (!finished) {
        const replayed = replay.shift();
        if (replayed) {
          last = replayed.position;
          return { value: replayed, done: false };
        }
        if (replaying) {
          replay = await log.readAfter(filter, last, REPLAY_PAGE);
          replaying = replay.length === REPLAY_PAGE;
          continue;
        }
        const result = await live.next();
        if (result.done) break;
        const event = result.value;
        if (last !== null && event.position <= last) continue;
        last = event.position;
        delivered(event);
        return { value: event, done: false };
      }
      finished = true;
      return { value: undefined, done: true };
    }

    const iterator: AsyncIterableIterator<Logged<E>> = {
      next,
      async return() {
        finished = true;
        await live.return?.();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  return {
    async publish(event) {
      if (closing) throw new Error('event stream is shutting down');
      receipts.set(event.id, {
        receivedAtMs: Date.now(),
        spanContext: trace.getActiveSpan()?.spanContext(),
      });
      const started = performance.now();
      const span = tracer?.startSpan('event_log append', {
        attributes: { 'cardgraph.event_log.backend': backend },
      });
      const append = log.append(event);
      inFlight.add(append);
      let outcome = 'failed';
      try {
        const result = await append;
        outcome = result.outcome;
        return result.outcome === 'appended' ? 'published' : 'duplicate';
      } finally {
        inFlight.delete(append);
        metrics?.eventLogAppend.observe({ backend, outcome }, (performance.now() - started) / 1000);
        const failing = outcome === 'failed';
        // The gauge is written when it changes only (a labelled set costs a label lookup per append).
        if (failing !== (appendFailedAtMs !== undefined))
          metrics?.eventLogAppendFailing.set({ log: kind.name }, failing ? 1 : 0);
        appendFailedAtMs = failing ? Date.now() : undefined;
        if (span) {
          span.setAttribute('cardgraph.event_log.outcome', outcome);
          if (outcome === 'failed') recordSpanFailure(span, 'append-failed');
          span.end();
        }
      }
    },
    subscribe(filter, signal) {
      const iterator = resume(filter, null);
      signal?.addEventListener('abort', () => void iterator.return?.(), { once: true });
      return iterator;
    },
    resume,
    history: (filter, after, limit) => log.history(filter, after, limit),
    byIds: (tenant, ids) => log.byIds(tenant, ids),
    subscriberCount: (tenant) => bus.subscriberCount(tenant),
    async ping() {
      await log.ping();
      // A backend that answers PING may still refuse writes (a Redis at `maxmemory`).
      if (appendFailedAtMs !== undefined && Date.now() - appendFailedAtMs < APPEND_FAILURE_HOLD_MS) {
        throw new EventLogAppendFailingError(`the ${kind.name} log refused its latest append`);
      }
    },
    async close() {
      if (closing) return;
      closing = true;
      clearInterval(trimTimer);
      bus.close();
      await Promise.allSettled(inFlight);
      stopTail();
      await log.close();
    },
  };
}
