import {
  type CardExpiry,
  DEFAULT_MAX_FUTURE_SKEW_MS,
  definedOnly,
  type Envelope,
  isUnmasked,
  type NotificationSource,
  readCardId,
  readEnvelope,
  readExpirationDate,
  readMaskedAccountNumber,
  readMonth,
  readSenderMembers,
  readTimestamp,
  readYear,
  type SenderMembers,
  type SettledTimestamp,
  settleTimestamp,
  type TimestampFlag,
  type UnmappedReason,
} from './notification-envelope.ts';

export type { CardExpiry, SenderMembers } from './notification-envelope.ts';

/**
 * Card lifecycle notification kinds the gateway knows (specification "Event kinds", §8 of the
 * sandbox contract): the account updater's `au_card.<kind>` and the card interface's
 * `cmp_au_card.<kind>` both map to `au_card.<kind>` (the `source` tells them apart);
 * `au_card.enrollment_failed` is the card interface's failed enrolment (with a reason code).
 * `au_card.valid` only appears in card check results, never in a notification.
 */
export const CARD_EVENT_TYPES = [
  'au_card.updated',
  'au_card.expired',
  'au_card.closed',
  'au_card.contact_cardholder_advice',
  'au_card.non_participating',
  'au_card.unknown',
  'au_card.enrolled',
  'au_card.opt_out',
  'au_card.enrollment_failed',
] as const;

/**
 * A known kind of {@link CARD_EVENT_TYPES}, or `other`: a notification whose `event` the gateway
 * does not know (yet). Its wire name is kept in `CardEvent.event` (open enumeration, issue 19 item 3).
 */
export type CardEventType = (typeof CARD_EVENT_TYPES)[number] | 'other';

/** The value of {@link CardEventType} for an event name the gateway does not know. */
export const OTHER_EVENT_TYPE = 'other';

/** Grouping methods of the notification table's `grouping` field (an open set: others are kept). */
export const CARD_EVENT_GROUPINGS = ['exp_repeat', 'every_single', 'high_rate'] as const;

/**
 * Documented reason codes of `cmp_au_card.enrollment_failed` (§8). Others are kept as sent.
 */
export const ENROLLMENT_FAILURE_REASONS = [
  'card-brand-not-supported',
  'declined',
  'internal-server-error',
  'validation-failed',
] as const;

/**
 * A card lifecycle notification as the gateway keeps it (specification "Notification body fields",
 * contract §4 and §8), with the `details` members lifted to the top level and renamed to camelCase.
 * Only `id`, `type`, `event`, `source`, `tenant` and `timestamp` are always present: the documented
 * notifications carry per-event subsets of the details members (v1 `non_participating`: card id and
 * occurrence time only).
 *
 * - `id`: the notification's id (a UUID), the same on every retry (the log drops repeats).
 * - `type`: the kind ({@link CardEventType}); `event`: the wire name as sent (e.g.
 *   `cmp_au_card.enrolled`, or an unknown one), PAN-masked and at most 128 characters; absent
 *   when the notification has no string `event`.
 * - `source`: `account_updater` (`au_card.*`), `card_management` (`cmp_au_card.*`) or `unknown`.
 * - `tenant`: the vault id (11 characters).
 * - `cardId`: `details.card_id`, `CRD` + 1-64 letters or digits (absent when it holds a card number).
 * - `timestamp`, `occurredAt`, `createdAt`: ISO 8601 with a zone (a zone-less time is read as UTC);
 *   `timestamp` falls back to `occurredAt`, then to the time of receipt.
 * - `timestampFlag`, `sentTimestamp`: set when the sent time is in the future or no real date
 *   ({@link SettledTimestamp}); `timestamp` is then the fallback or the time of receipt.
 * - `newAccountNumber`, `oldAccountNumber`: masked to at most BIN and last four.
 * - `newExpiry`, `oldExpiry`: from the `MMYY` members; `expMonth` 1-12, `expYear` four digits.
 * - `failureReason`: the reason code of an `enrollment_failed` (e.g. `card-brand-not-supported`);
 *   absent when it holds a card number.
 * - Sender members: see {@link SenderMembers}; all text PAN-masked and bounded.
 *
 * Subscribers all receive the same instance, so it is frozen; memoize per-event work in a WeakMap.
 */
export interface CardEvent extends SenderMembers {
  readonly id: string;
  readonly type: CardEventType;
  readonly event?: string;
  readonly source: NotificationSource;
  readonly tenant: string;
  readonly cardId?: string;
  readonly timestamp: string;
  readonly timestampFlag?: TimestampFlag;
  readonly sentTimestamp?: string;
  readonly occurredAt?: string;
  readonly createdAt?: string;
  readonly newAccountNumber?: string;
  readonly oldAccountNumber?: string;
  readonly newExpiry?: Readonly<CardExpiry>;
  readonly oldExpiry?: Readonly<CardExpiry>;
  readonly expMonth?: number;
  readonly expYear?: number;
  readonly failureReason?: string;
}

/** Result of {@link parseCardNotification}: an event, or why the body cannot be mapped. */
export type ParseCardNotificationResult =
  | { ok: true; event: CardEvent }
  | { ok: false; reason: UnmappedReason };

const KNOWN_TYPES: ReadonlySet<string> = new Set(CARD_EVENT_TYPES);

/** The member names a failure reason code has been seen under; the first usable one is taken. */
const REASON_MEMBERS = ['reason', 'reason_code', 'failure_code', 'failure_reason', 'error_code', 'code'];

/**
 * The reason code of a failed enrolment: a short code (`declined`, …) from the first member that has
 * one; a code holding a card number (`4000056655665556`) is not one (the member is dropped).
 */
function readFailureReason(details: Record<string, unknown>): string | undefined {
  for (const member of REASON_MEMBERS) {
    const value = details[member];
    if (typeof value === 'string' && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(value) && isUnmasked(value))
      return value;
  }
  return undefined;
}

/**
 * Maps a read envelope to a {@link CardEvent} (frozen): a notification of the card family, or of an
 * unknown family (kept with type `other`). Every details member is optional.
 * @param receivedAt ISO 8601 time of receipt: the `timestamp` when the notification has none usable.
 * @param maxFutureSkewMs how far after receipt `timestamp` may be before it is flagged (see
 *   {@link settleTimestamp}).
 */
export function cardEventOf(
  envelope: Envelope,
  receivedAt: string,
  maxFutureSkewMs = DEFAULT_MAX_FUTURE_SKEW_MS,
): CardEvent {
  const { details, event } = envelope;
  const canonical = event.family === 'card' ? `au_card.${event.kind}` : undefined;
  const type: CardEventType =
    canonical !== undefined && KNOWN_TYPES.has(canonical) ? (canonical as CardEventType) : OTHER_EVENT_TYPE;
  const card = definedOnly({
    cardId: readCardId(details.card_id),
    occurredAt: readTimestamp(details.occurred_at),
    createdAt: readTimestamp(details.created_at),
    newAccountNumber: readMaskedAccountNumber(details.new_account_number),
    oldAccountNumber: readMaskedAccountNumber(details.old_account_number),
    newExpiry: readExpirationDate(details.new_expiration_date),
    oldExpiry: readExpirationDate(details.old_expiration_date),
    expMonth: readMonth(details.exp_month),
    expYear: readYear(details.exp_year),
    failureReason:
      type === 'au_card.enrollment_failed' || type === OTHER_EVENT_TYPE
        ? readFailureReason(details)
        : undefined,
  });
  const cardEvent: CardEvent = {
    id: envelope.id,
    type,
    ...(event.name !== undefined ? { event: event.name } : {}),
    source: event.source,
    tenant: envelope.tenant,
    ...settleTimestamp(envelope, undefined, receivedAt, maxFutureSkewMs),
    ...card,
    ...readSenderMembers(envelope.body),
  };
  return Object.freeze(cardEvent);
}

/**
 * Reads a parsed webhook body as a card notification, tolerantly (issue 19 item 3): any object with
 * a notification `id` and a vault `tenant` maps to a {@link CardEvent}, whatever its `event` (unknown
 * kinds become type `other`), whatever subset of details members it carries, `details` as an
 * object or a JSON-encoded string. Unusable members are left out, never refused.
 * @param body the result of `JSON.parse` of the raw request body.
 * @param receivedAt ISO 8601 time of receipt (fallback `timestamp`); now by default.
 * @returns `{ ok: true, event }` (frozen), or `{ ok: false, reason }` when the body cannot be mapped.
 */
export function parseCardNotification(
  body: unknown,
  receivedAt: string = new Date().toISOString(),
): ParseCardNotificationResult {
  const read = readEnvelope(body);
  if (!read.ok) return { ok: false, reason: read.reason };
  return { ok: true, event: cardEventOf(read.envelope, receivedAt) };
}
