import type { Logger } from '../lib/logger.ts';
import type { CardEvent } from './card-event.ts';
import {
  type CardEventBus,
  type CardEventFilter,
  createInMemoryCardEventBus,
  type PublishOutcome,
} from './card-event-bus.ts';
import type { CardEventLog, HistoryCursor, LoggedCardEvent } from './event-log.ts';

/** Options of {@link createCardEventStream}. */
export interface CardEventStreamOptions {
  log: CardEventLog;
  logger: Logger;
  /** How often retention runs (ms); default 60 s. */
  trimIntervalMs?: number;
  /** Events buffered per live subscriber before it is ended; default 1,000. */
  maxBufferedEvents?: number;
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
  resume(filter: CardEventFilter, after: bigint | null): AsyncIterableIterator<LoggedCardEvent>;
  /** History page ordered by event timestamp (then log position), after the cursor. */
  history(filter: CardEventFilter, after: HistoryCursor | null, limit: number): Promise<LoggedCardEvent[]>;
  /** Live subscribers, of `tenant` only when given. */
  subscriberCount(tenant?: string): number;
  /** Ends every subscription, waits for appends in flight, stops retention and closes the log. */
  close(): Promise<void>;
}

const REPLAY_PAGE = 500;

/** Builds the stream and positions the log's tail; see {@link CardEventStream}. */
export async function createCardEventStream(options: CardEventStreamOptions): Promise<CardEventStream> {
  const { log, logger } = options;
  const bus = createInMemoryCardEventBus({ maxBufferedEvents: options.maxBufferedEvents ?? 1_000 });
  const stopTail = await log.tail((event) => {
    void bus.publish(event);
  });
  const inFlight = new Set<Promise<unknown>>();
  const trimTimer = setInterval(() => {
    log.trim().then(
      (dropped) => dropped > 0 && logger.info({ dropped }, 'card event retention applied'),
      (error: unknown) => logger.error({ err: (error as Error).message }, 'card event retention failed'),
    );
  }, options.trimIntervalMs ?? 60_000);
  trimTimer.unref();
  let closing = false;

  function resume(filter: CardEventFilter, after: bigint | null): AsyncIterableIterator<LoggedCardEvent> {
    // Subscribe to live events before reading history, so nothing falls between the two; entries
    // seen in both are dropped by position.
    const live = bus.subscribe(filter);
    let last = after;
    let replay: LoggedCardEvent[] = [];
    let replaying = after !== null;
    let finished = false;

    async function next(): Promise<IteratorResult<LoggedCardEvent>> {
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
        const event = result.value as LoggedCardEvent;
        if (last !== null && event.position <= last) continue;
        last = event.position;
        return { value: event, done: false };
      }
      finished = true;
      return { value: undefined, done: true };
    }

    const iterator: AsyncIterableIterator<LoggedCardEvent> = {
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
      if (closing) throw new Error('card event stream is shutting down');
      const append = log.append(event);
      inFlight.add(append);
      try {
        const result = await append;
        return result.outcome === 'appended' ? 'published' : 'duplicate';
      } finally {
        inFlight.delete(append);
      }
    },
    subscribe(filter, signal) {
      const iterator = resume(filter, null);
      signal?.addEventListener('abort', () => void iterator.return?.(), { once: true });
      return iterator;
    },
    resume,
    history: (filter, after, limit) => log.history(filter, after, limit),
    subscriberCount: (tenant) => bus.subscriberCount(tenant),
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
