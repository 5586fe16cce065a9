import { createHash } from 'node:crypto';
import type { Logger } from '../lib/logger.ts';
import { redactCardText } from '../lib/redaction.ts';
import type { PublishOutcome } from './card-event-bus.ts';
import type { EventLog, EventLogKind, HistoryCursor, Logged } from './event-log.ts';
import { maskNotificationValue, type UnmappedReason } from './notification-envelope.ts';

/** Longest stored body of an unmapped notification (characters of its redacted JSON); the rest is cut. */
export const MAX_UNMAPPED_BODY_CHARS = 16 * 1024;

/** The `tenant` of an unmapped notification that names no readable vault. */
export const UNATTRIBUTED_TENANT = '';

/**
 * A signed notification the gateway could not map to an event (issue 19 item 3: authenticated
 * notifications are never refused for their shape), kept for operators in the durable log.
 * - `id`: the notification's `id` when readable, else {@link bodyDigestId} of the raw body (the
 *   same on every redelivery of the same bytes, so a retry is recognised as a duplicate).
 * - `tenant`: the vault id when readable and served by the gateway, else {@link UNATTRIBUTED_TENANT}
 *   (listed only to an operator of the whole gateway, see src/schema/unmapped-notification.ts).
 * - `namedVault`: the vault id it named when the gateway does not serve that vault (so `tenant` is
 *   {@link UNATTRIBUTED_TENANT}); absent otherwise.
 * - `type`, `reason`: why it could not be mapped ({@link UnmappedReason}).
 * - `event`: the `event` wire name when readable (PAN-masked, at most 128 characters).
 * - `timestamp`: when the gateway received it (ISO 8601 UTC).
 * - `body`: the body as JSON text with every card number masked (BIN and last four: however its
 *   digits are written, in JSON-encoded strings at any depth, split over array items or sibling
 *   members) and every security code replaced (members named like one in any spelling, name/value
 *   pairs, codes written after their name): the one masker, src/events/notification-envelope.ts
 *   `maskNotificationValue`; cut to
 *   {@link MAX_UNMAPPED_BODY_CHARS}; `truncated` tells; `bodyBytes` the size received.
 * - `bodyEncoding`: `base64` when `body` is the base64 of the (redacted) bytes of a body that is not
 *   UTF-8 ({@link undecodableNotificationOf}); absent when `body` is JSON text.
 */
export interface UnmappedNotification {
  readonly id: string;
  readonly tenant: string;
  readonly namedVault?: string;
  readonly type: UnmappedReason;
  readonly reason: UnmappedReason;
  readonly event?: string;
  readonly timestamp: string;
  readonly body: string;
  readonly truncated: boolean;
  readonly bodyBytes: number;
  readonly bodyEncoding?: 'base64';
}

/**
 * The id of a notification without a usable one: `body-sha256:` and the SHA-256 of its bytes, each
 * hex digit written as a letter `a`-`p` (0 → a … f → p), so the id holds no digits the PAN masker
 * could take for a card number and is shown the same everywhere.
 */
export function bodyDigestId(raw: Buffer): string {
  const hex = createHash('sha256').update(raw).digest('hex');
  let letters = '';
  for (const digit of hex) letters += String.fromCharCode(97 + Number.parseInt(digit, 16));
  return `body-sha256:${letters}`;
}

/**
 * Builds the stored, redacted form of an unmapped notification.
 * @param raw the exact request body bytes (already verified).
 * @param json its parse (any JSON value).
 * @param read what could be read: `reason`, and `tenant`, `id`, `event` when readable; `namedVault`
 *   (with no `tenant`) for a vault the gateway does not serve.
 * @param receivedAt ISO 8601 time of receipt.
 */
export function unmappedNotificationOf(
  raw: Buffer,
  json: unknown,
  read: { reason: UnmappedReason; tenant?: string; namedVault?: string; id?: string; event?: string },
  receivedAt: string,
): UnmappedNotification {
  // Redacted as a value (numbers shaped like a PAN, security-code members, numbers split over
  // members), then as text (belt and braces); only then cut, so a cut never leaves digits of a PAN.
  const redacted = redactCardText(JSON.stringify(maskNotificationValue(json)) ?? 'null');
  const truncated = redacted.length > MAX_UNMAPPED_BODY_CHARS;
  return Object.freeze({
    id: read.id ?? bodyDigestId(raw),
    tenant: read.tenant ?? UNATTRIBUTED_TENANT,
    ...(read.tenant === undefined && read.namedVault !== undefined ? { namedVault: read.namedVault } : {}),
    type: read.reason,
    reason: read.reason,
    ...(read.event !== undefined ? { event: read.event } : {}),
    timestamp: receivedAt,
    body: truncated ? redacted.slice(0, MAX_UNMAPPED_BODY_CHARS) : redacted,
    truncated,
    bodyBytes: raw.length,
  });
}

/**
 * Signed notifications that could not be mapped to an event, redacted; subject =
 * the reason (`no-tenant`, …), tenant `''` when no vault could be read.
 */
export const UNMAPPED_NOTIFICATION_LOG: EventLogKind<UnmappedNotification> = {
  name: 'unmapped_notifications',
  subjectColumn: 'reason',
  subjectOf: (entry) => entry.reason,
};

/**
 * Builds the stored form of a signed body that is not UTF-8 (reason `not-utf8`): kept as bytes,
 * base64 in `body` (`bodyEncoding: 'base64'`), unattributed (no vault is read from bytes that are no
 * text), with the id {@link bodyDigestId}. Redacted first on the bytes read one to one as Latin-1,
 * where the ASCII digits and names of JSON keep their places: when that text is JSON its value is
 * redacted as a mapped body's is (security-code members too), else card numbers are masked in it;
 * every other byte is kept as received. Cut to {@link MAX_UNMAPPED_BODY_CHARS} bytes before encoding.
 * @param raw the exact request body bytes (already verified).
 * @param receivedAt ISO 8601 time of receipt.
 */
export function undecodableNotificationOf(raw: Buffer, receivedAt: string): UnmappedNotification {
  const latin1 = raw.toString('latin1');
  let redacted: string;
  try {
    redacted = redactCardText(JSON.stringify(maskNotificationValue(JSON.parse(latin1))));
  } catch {
    redacted = redactCardText(latin1);
  }
  const bytes = Buffer.from(redacted, 'latin1');
  const truncated = bytes.length > MAX_UNMAPPED_BODY_CHARS;
  return Object.freeze({
    id: bodyDigestId(raw),
    tenant: UNATTRIBUTED_TENANT,
    type: 'not-utf8',
    reason: 'not-utf8',
    timestamp: receivedAt,
    body: (truncated ? bytes.subarray(0, MAX_UNMAPPED_BODY_CHARS) : bytes).toString('base64'),
    truncated,
    bodyBytes: raw.length,
    bodyEncoding: 'base64',
  });
}

/** Where the webhook receiver keeps unmapped notifications; see {@link UnmappedNotificationStore}. */
export interface UnmappedNotificationSink {
  /**
   * Stores `entry` durably unless the same (tenant, id) is already stored.
   * @returns `published` (stored) or `duplicate`.
   * @throws the log's append errors (the receiver answers 503 so the sender retries).
   */
  record(entry: UnmappedNotification): Promise<PublishOutcome>;
}

/** Options of {@link UnmappedNotificationStore}. */
export interface UnmappedNotificationStoreOptions {
  /** The durable log of kind `UNMAPPED_NOTIFICATION_LOG` (sqlite or Redis, like the event logs). */
  log: EventLog<UnmappedNotification>;
  logger: Logger;
  /** How often retention runs (ms); default 60 s. */
  trimIntervalMs?: number;
  /**
   * The log's byte bound (`UNMAPPED_MAX_BYTES`, the log's `RetentionPolicy.maxBytes`): retention
   * also runs once the entries recorded since the last run hold an eighth of it, so a burst is
   * bounded before the next interval. Absent: by interval only.
   */
  maxBytes?: number;
}

/**
 * The operators' record of unmapped notifications (issue 19 item 3): appended durably by the
 * webhook receiver (acknowledged only once stored, so a SIGKILL loses none), listed by
 * `Query.unmappedNotifications`, trimmed by its own retention (`UNMAPPED_RETENTION_HOURS`, and
 * `UNMAPPED_MAX_BYTES` of stored entries).
 */
export class UnmappedNotificationStore implements UnmappedNotificationSink {
  readonly #log: EventLog<UnmappedNotification>;
  readonly #logger: Logger;
  readonly #trimTimer: NodeJS.Timeout;
  readonly #trimAfterBytes: number;
  /** Bytes of the entries recorded since retention last started. */
  #recordedBytes = 0;
  #trimming: Promise<void> | undefined;
  #closed = false;

  constructor(options: UnmappedNotificationStoreOptions) {
    this.#log = options.log;
    this.#logger = options.logger;
    this.#trimTimer = setInterval(() => this.#trim(), options.trimIntervalMs ?? 60_000);
    this.#trimTimer.unref();
    this.#trimAfterBytes = options.maxBytes === undefined ? Infinity : Math.max(1, options.maxBytes / 8);
  }

  /** See {@link UnmappedNotificationSink.record}. @throws Error once closed. */
  async record(entry: UnmappedNotification): Promise<PublishOutcome> {
    if (this.#closed) throw new Error('unmapped notification store is closed');
    const result = await this.#log.append(entry);
    if (result.outcome !== 'appended') return 'duplicate';
    this.#recordedBytes += Buffer.byteLength(JSON.stringify(entry));
    if (this.#recordedBytes >= this.#trimAfterBytes) this.#trim();
    return 'published';
  }

  /** Resolves when the retention run in progress, if any, has finished (tests). */
  async settled(): Promise<void> {
    await this.#trimming;
  }

  /**
   * Stored entries of `tenants` (vault ids; {@link UNATTRIBUTED_TENANT} for those naming no vault)
   * ordered by receipt time then position, strictly after `after`, at most `limit`.
   */
  history(
    tenants: readonly string[],
    after: HistoryCursor | null,
    limit: number,
  ): Promise<Logged<UnmappedNotification>[]> {
    return this.#log.history({ tenants }, after, limit);
  }

  /** Resolves when the log's backend answers (readiness). */
  ping(): Promise<void> {
    return this.#log.ping();
  }

  /** Stops retention and closes the log (appends in flight finish first). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#trimTimer);
    await this.#trimming;
    await this.#log.close();
  }

  #trim(): void {
    if (this.#trimming || this.#closed) return;
    this.#recordedBytes = 0;
    this.#trimming = this.#log
      .trim()
      .then(
        (dropped) => {
          if (dropped > 0) this.#logger.info({ dropped, log: 'unmapped_notifications' }, 'retention applied');
        },
        (error: unknown) =>
          this.#logger.error(
            { err: (error as Error).message, log: 'unmapped_notifications' },
            'retention failed',
          ),
      )
      .finally(() => {
        this.#trimming = undefined;
      });
  }
}
