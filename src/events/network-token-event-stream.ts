import type { PublishOutcome, SubscriberWeight } from './card-event-bus.ts';
import { createEventStream, type EventStreamOptions } from './card-event-stream.ts';
import {
  type EventLogFilter,
  type HistoryCursor,
  type LoggedNetworkTokenEvent,
  NETWORK_TOKEN_EVENT_LOG,
  type NetworkTokenEventLog,
} from './event-log.ts';
import type { NetworkTokenEvent } from './network-token-event.ts';

/**
 * Which network token events a subscriber or history page receives.
 * - `tenants`: vault ids (at least one); an event is delivered only to subscribers naming its tenant.
 * - `panAlias`: only events whose `panAlias` is exactly this alias, when set. A notification names
 *   the alias provisioning was requested with, so a token provisioned through its `tok_` alias is not
 *   matched by the card's format-preserving alias (gap decisions, "Network tokens": identity).
 */
export interface NetworkTokenEventFilter {
  tenants: readonly string[];
  panAlias?: string;
}

/**
 * Network token notifications end to end (gap decisions, "Network token notifications"), durable like
 * card events (issue 10, class 10): the webhook receiver appends through `publish` (answered once the
 * log holds the event; duplicates recognised by tenant and notification id), the log's tail fans each
 * entry out once per process (on every replica with `EVENTS_BACKEND=redis`), subscribers resume from
 * a cursor with no gap and no duplicate, and `history` pages the retained events.
 */
export interface NetworkTokenEventStream {
  /** @returns `published`, or `duplicate` when the log already holds (tenant, id). */
  publish(event: NetworkTokenEvent): Promise<PublishOutcome>;
  /** Live events from now on; ends when `signal` aborts or the iterator returns. */
  subscribe(
    filter: NetworkTokenEventFilter,
    signal?: AbortSignal,
  ): AsyncIterableIterator<LoggedNetworkTokenEvent>;
  /** With `after` (a log position), every retained event after it first, then live ones. */
  resume(
    filter: NetworkTokenEventFilter,
    after: bigint | null,
    weight?: SubscriberWeight,
  ): AsyncIterableIterator<LoggedNetworkTokenEvent>;
  /** History page ordered by event timestamp (then log position), after the cursor. */
  history(
    filter: NetworkTokenEventFilter,
    after: HistoryCursor | null,
    limit: number,
  ): Promise<LoggedNetworkTokenEvent[]>;
  /**
   * The retained events of `tenant` with these notification ids, in no particular order (none for
   * an id not logged for that tenant); one log read (src/events/event-log.ts `byIds`).
   */
  byIds(tenant: string, ids: readonly string[]): Promise<LoggedNetworkTokenEvent[]>;
  /** Live subscribers, of `tenant` only when given. */
  subscriberCount(tenant?: string): number;
  /** Resolves when the log's backend answers (readiness). */
  ping(): Promise<void>;
  /** Ends every subscription, waits for appends in flight, stops retention and closes the log. */
  close(): Promise<void>;
}

/** Options of {@link createNetworkTokenEventStream}: those of a card event stream, over a network token log. */
export type NetworkTokenEventStreamOptions = Omit<EventStreamOptions<NetworkTokenEvent>, 'kind' | 'log'> & {
  log: NetworkTokenEventLog;
};

const logFilter = (filter: NetworkTokenEventFilter): EventLogFilter => ({
  tenants: filter.tenants,
  ...(filter.panAlias !== undefined ? { subject: filter.panAlias } : {}),
});

/**
 * Builds the durable network token event stream over `options.log` and positions its tail.
 * @throws the log's I/O errors.
 */
export async function createNetworkTokenEventStream(
  options: NetworkTokenEventStreamOptions,
): Promise<NetworkTokenEventStream> {
  const stream = await createEventStream({ ...options, kind: NETWORK_TOKEN_EVENT_LOG });
  return {
    publish: (event) => stream.publish(event),
    subscribe: (filter, signal) => stream.subscribe(logFilter(filter), signal),
    resume: (filter, after, weight) => stream.resume(logFilter(filter), after, weight),
    history: (filter, after, limit) => stream.history(logFilter(filter), after, limit),
    byIds: (tenant, ids) => stream.byIds(tenant, ids),
    subscriberCount: (tenant) => stream.subscriberCount(tenant),
    ping: () => stream.ping(),
    close: () => stream.close(),
  };
}
