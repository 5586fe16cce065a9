import type { CardEvent } from './card-event.ts';
import type { CardEventFilter } from './card-event-bus.ts';

/**
 * The durable card event log (issue: live card events never lost, never duplicated). Two
 * implementations share this interface: node:sqlite for one gateway (src/events/sqlite-event-log.ts)
 * and Redis Streams for several replicas (src/events/redis-event-log.ts).
 *
 * Positions are unsigned 64-bit integers, strictly increasing in append order across the whole log
 * (all tenants): a subscriber that resumes after position P receives exactly the entries after P.
 */

/** A card event as stored: its log position and whether a newer event of its card came first. */
export interface LoggedCardEvent extends CardEvent {
  /** Log position; strictly increasing in append order. */
  readonly position: bigint;
  /** Milliseconds since the epoch of `timestamp` (the history connection orders by it). */
  readonly timestampMs: number;
  /**
   * True when an event of the same card with a later `timestamp` had already been appended: the
   * sender delivers in no guaranteed order (contract §4), so a client applying updates must not let
   * this one overwrite newer card data.
   */
  readonly outOfOrder: boolean;
}

/** Result of {@link CardEventLog.append}. */
export type AppendOutcome =
  | { outcome: 'appended'; event: LoggedCardEvent }
  | { outcome: 'duplicate'; position: bigint | null };

/** Retention of the log: entries older than `maxAgeMs` or beyond the newest `maxCount` are dropped. */
export interface RetentionPolicy {
  maxAgeMs: number;
  maxCount: number;
}

/** Where the history connection resumes: after this (timestamp, position) pair. */
export interface HistoryCursor {
  timestampMs: number;
  position: bigint;
}

/** The durable event log. Every method may throw the backend's I/O errors. */
export interface CardEventLog {
  /**
   * Appends durably (fsynced to the backend's journal) unless an event with the same notification
   * `id` is already in the log, in which case nothing is written.
   */
  append(event: CardEvent): Promise<AppendOutcome>;
  /** Entries after `after` (exclusive; from the oldest retained when null) in position order, at most `limit`. */
  readAfter(filter: CardEventFilter, after: bigint | null, limit: number): Promise<LoggedCardEvent[]>;
  /**
   * History page ordered by (timestampMs, position): entries strictly after `after`, at most `limit`.
   */
  history(filter: CardEventFilter, after: HistoryCursor | null, limit: number): Promise<LoggedCardEvent[]>;
  /**
   * Calls `listener` with every entry appended from now on, by this process or (Redis) any replica,
   * in position order. Resolves, once the tail is positioned, to a function that stops the listener.
   */
  tail(listener: (event: LoggedCardEvent) => void): Promise<() => void>;
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
  appendedAtMs?(event: LoggedCardEvent): number | undefined;
  /** Flushes and closes; pending appends finish first. */
  close(): Promise<void>;
}

/** Builds the stored form of a notification. */
export function toLoggedEvent(event: CardEvent, position: bigint, outOfOrder: boolean): LoggedCardEvent {
  return Object.freeze({ ...event, position, timestampMs: Date.parse(event.timestamp), outOfOrder });
}

/**
 * Opaque cursor of a logged event (Relay connection cursor and subscription resume point):
 * base64url of `v1:<position>:<timestampMs>`.
 */
export function encodeCursor(event: Pick<LoggedCardEvent, 'position' | 'timestampMs'>): string {
  return Buffer.from(`v1:${event.position}:${event.timestampMs}`).toString('base64url');
}

/**
 * Parses a cursor made by {@link encodeCursor}.
 * @returns the position and timestamp, or null when the cursor is not one of ours.
 */
export function decodeCursor(cursor: string): HistoryCursor | null {
  const match = /^v1:(\d{1,20}):(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) return null;
  return { position: BigInt(match[1]!), timestampMs: Number(match[2]) };
}

/** True when `event` passes `filter` (tenants, card, kinds). */
export function matchesFilter(event: CardEvent, filter: CardEventFilter): boolean {
  if (!filter.tenants.includes(event.tenant)) return false;
  if (filter.cardId !== undefined && event.cardId !== filter.cardId) return false;
  if (filter.types !== undefined && !filter.types.includes(event.type)) return false;
  return true;
}
