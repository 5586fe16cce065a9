import type { CardEvent } from './card-event.ts';
import type { BusFilter } from './card-event-bus.ts';
import type { NetworkTokenEvent } from './network-token-event.ts';

/**
 * The durable event logs (issue: live events never lost, never duplicated): one for card events and
 * one for network token notifications (issue 10, class 10), each with its own positions, cursors,
 * replay and history. Two implementations share this interface: node:sqlite for one gateway
 * (src/events/sqlite-event-log.ts) and Redis Streams for several replicas
 * (src/events/redis-event-log.ts).
 *
 * Positions are unsigned 64-bit integers, strictly increasing in append order across the whole log
 * (all tenants): a subscriber that resumes after position P receives exactly the entries after P.
 * Duplicates are recognised by (tenant, notification id): the same id sent for two vaults is two
 * events.
 */

/**
 * What every logged event has: notification id, tenant (vault id), kind and ISO 8601 `timestamp`;
 * `timestampFlag` when its own time was unusable (src/events/notification-envelope.ts
 * `SettledTimestamp`): such an event is never flagged out of order and never makes a later event
 * of its subject out of order.
 */
export interface LogEvent {
  readonly id: string;
  readonly tenant: string;
  readonly type: string;
  readonly timestamp: string;
  readonly timestampFlag?: 'future' | 'invalid';
}

/**
 * Which events a log holds and how they are addressed: `name` (sqlite table, Redis key prefix
 * part), `subjectOf` (what `EventLogFilter.subject` and the out-of-order flag compare: the card id of
 * a card event, the PAN alias of a network token event) and `subjectColumn` (its sqlite column).
 */
export interface EventLogKind<E extends LogEvent> {
  readonly name: 'card_events' | 'network_token_events' | 'unmapped_notifications';
  readonly subjectColumn: 'card_id' | 'pan_alias' | 'reason';
  subjectOf(event: E): string;
}

/**
 * Card lifecycle events (`au_card.*`, `cmp_au_card.*`, unknown kinds), subject = `details.card_id`
 * (`''` for a notification without a usable card id: those share one subject per vault).
 */
export const CARD_EVENT_LOG: EventLogKind<CardEvent> = {
  name: 'card_events',
  subjectColumn: 'card_id',
  subjectOf: (event) => event.cardId ?? '',
};

/**
 * Network token notifications (`network_token.*`, `cmp_network_token.*`), subject =
 * `details.pan_alias` (`''` when it has none).
 */
export const NETWORK_TOKEN_EVENT_LOG: EventLogKind<NetworkTokenEvent> = {
  name: 'network_token_events',
  subjectColumn: 'pan_alias',
  subjectOf: (event) => event.panAlias ?? '',
};

/** Which entries a read returns: tenants (at least one), optionally one subject and some kinds. */
export type EventLogFilter = BusFilter;

/** An event as stored: its log position, timestamp in ms and whether a newer event of its subject came first. */
export type Logged<E extends LogEvent> = E & {
  /** Log position; strictly increasing in append order. */
  readonly position: bigint;
  /** Milliseconds since the epoch of `timestamp` (the history connection orders by it). */
  readonly timestampMs: number;
  /**
   * True when an event of the same subject with a later `timestamp` had already been appended: the
   * sender delivers in no guaranteed order (contract §4), so a client applying updates must not let
   * this one overwrite newer data.
   */
  readonly outOfOrder: boolean;
};

/** A network token notification as stored. */
export type LoggedNetworkTokenEvent = Logged<NetworkTokenEvent>;

/** A card event as stored. */
export type LoggedCardEvent = Logged<CardEvent>;

/** Result of {@link EventLog.append}. */
export type AppendOutcome<E extends LogEvent = CardEvent> =
  | { outcome: 'appended'; event: Logged<E> }
  | { outcome: 'duplicate'; position: bigint | null };

/**
 * Retention of the log: entries older than `maxAgeMs` or beyond the newest `maxCount` are dropped.
 * `receiptMs`: how long after its receipt a (tenant, id) is still answered `duplicate` once its entry
 * left the log (by age or count); at least the window in which one signed request verifies, so a
 * replay of a notification whose event was trimmed is never appended (and delivered) again. The
 * gateway sets it to {@link receiptPeriodMs} of the signature tolerance; 0 or absent: as long as the
 * entry is retained.
 */
export interface RetentionPolicy {
  maxAgeMs: number;
  maxCount: number;
  receiptMs?: number;
  /**
   * Bytes the stored entries (their JSON text) may take together; the oldest go first past it.
   * Absent: no byte bound (the event logs, whose entries are small and bounded by `maxCount`).
   */
  maxBytes?: number;
}

/**
 * How long receipts must be kept for a signature tolerance of `toleranceS` seconds, in ms: a
 * signature with timestamp `t` verifies from `t - toleranceS` to `t + toleranceS` (whole seconds,
 * either way), so two posts of one signed request can be up to twice the tolerance and a second
 * apart.
 */
export function receiptPeriodMs(toleranceS: number): number {
  return (2 * toleranceS + 1) * 1000;
}

/** Where the history connection resumes: after this (timestamp, position) pair. */
export interface HistoryCursor {
  timestampMs: number;
  position: bigint;
}

/** The durable card event log. */
export type CardEventLog = EventLog<CardEvent>;

/** The durable network token event log. */
export type NetworkTokenEventLog = EventLog<NetworkTokenEvent>;

/** A durable event log of events `E` (stored as `L`). Every method may throw the backend's I/O errors. */
export interface EventLog<E extends LogEvent> {
  /**
   * Appends durably (fsynced to the backend's journal) unless an event with the same tenant and
   * notification `id` is already in the log, in which case nothing is written.
   */
  append(event: E): Promise<AppendOutcome<E>>;
  /** Entries after `after` (exclusive; from the oldest retained when null) in position order, at most `limit`. */
  readAfter(filter: EventLogFilter, after: bigint | null, limit: number): Promise<Logged<E>[]>;
  /**
   * History page ordered by (timestampMs, position): entries strictly after `after`, at most `limit`.
   */
  history(filter: EventLogFilter, after: HistoryCursor | null, limit: number): Promise<Logged<E>[]>;
  /**
   * The retained entries of `tenant` with these notification ids, in no particular order: an id not
   * logged for that tenant (or dropped by retention) has none. One read per call (sqlite: one query;
   * Redis: the (tenant, id) dedupe markers, then their entries, pipelined). Federation references
   * to `CardEvent` by id (issue 22).
   */
  byIds(tenant: string, ids: readonly string[]): Promise<Logged<E>[]>;
  /**
   * Calls `listener` with every entry appended from now on, by this process or (Redis) any replica,
   * in position order. Resolves, once the tail is positioned, to a function that stops the listener.
   */
  tail(listener: (event: Logged<E>) => void): Promise<() => void>;
  /** Drops entries outside the retention policy; returns how many were dropped. */
  trim(): Promise<number>;
  /**
   * Resolves when the backend answers a trivial request (readiness probe).
   * @throws Error (with a `code`, e.g. `disconnected`) when it does not; callers bound the wait.
   */
  ping(): Promise<void>;
  /**
   * When the backend recorded `event`'s append, in ms since the epoch, if the log position tells
   * (Redis stream ids carry it); the delivery lag of events received by another replica.
   */
  appendedAtMs?(event: Logged<E>): number | undefined;
  /** Flushes and closes; pending appends finish first. */
  close(): Promise<void>;
}

/**
 * An append the backend did not confirm (script or transaction failed, connection lost): nothing of
 * it is acknowledged, the sender is answered 500 and retries. With group commit every append of the
 * failed batch gets it. `code` is `event-log-append-failed`; `cause` holds the backend's error.
 */
export class EventLogAppendError extends Error {
  override name = 'EventLogAppendError';
  readonly code = 'event-log-append-failed';
  constructor(message: string, options?: { cause?: unknown }) {
    super(`event log append failed: ${message}`, options);
  }
}

/** Builds the stored form of a notification. */
export function toLoggedEvent<E extends LogEvent>(
  event: E,
  position: bigint,
  outOfOrder: boolean,
): Logged<E> {
  return Object.freeze({ ...event, position, timestampMs: Date.parse(event.timestamp), outOfOrder });
}

/**
 * Opaque cursor of a logged event (Relay connection cursor and subscription resume point):
 * base64url of `v1:<position>:<timestampMs>`.
 */
export function encodeCursor(event: { position: bigint; timestampMs: number }): string {
  return Buffer.from(`v1:${event.position}:${event.timestampMs}`).toString('base64url');
}

/** Largest position a log can hold: sqlite's INTEGER (and Redis's sequence) is a signed 64-bit number. */
const MAX_POSITION = 2n ** 63n - 1n;

/**
 * Parses a cursor made by {@link encodeCursor}.
 * @returns the position and timestamp, or null when the cursor is not one of ours (including a
 *   position beyond a signed 64-bit integer, which no log holds and sqlite cannot bind).
 */
export function decodeCursor(cursor: string): HistoryCursor | null {
  const match = /^v1:(\d{1,20}):(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) return null;
  const position = BigInt(match[1]!);
  if (position > MAX_POSITION) return null;
  return { position, timestampMs: Number(match[2]) };
}

/** True when `event` passes `filter` (tenants, subject of `kind`, kinds). */
export function matchesFilter<E extends LogEvent>(
  event: E,
  filter: EventLogFilter,
  kind: EventLogKind<E>,
): boolean {
  if (!filter.tenants.includes(event.tenant)) return false;
  if (filter.subject !== undefined && kind.subjectOf(event) !== filter.subject) return false;
  if (filter.types !== undefined && !filter.types.includes(event.type)) return false;
  return true;
}

/** The log filter of a card event filter (`cardId` is the subject). */
export function cardLogFilter(filter: {
  tenants: readonly string[];
  cardId?: string;
  types?: readonly string[];
}): EventLogFilter {
  return {
    tenants: filter.tenants,
    ...(filter.cardId !== undefined ? { subject: filter.cardId } : {}),
    ...(filter.types !== undefined ? { types: filter.types } : {}),
  };
}
