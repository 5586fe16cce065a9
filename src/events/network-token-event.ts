import {
  DEFAULT_MAX_FUTURE_SKEW_MS,
  definedOnly,
  type Envelope,
  isPlainObject,
  isUnmasked,
  MAX_IDENTIFIER_CHARS,
  type NotificationSource,
  readDigits,
  readEnvelope,
  readMonth,
  readSenderMembers,
  readText,
  readTimestamp,
  readYear,
  type SenderMembers,
  type SettledTimestamp,
  settleTimestamp,
  type TimestampFlag,
  type UnmappedReason,
} from './notification-envelope.ts';

/**
 * Network token notification kinds the gateway knows: `network_token.updated` (the provider's
 * documented notification, §8: a token's status changed: Updated, Used, Suspended, Activated,
 * Deleted; `cmp_network_token.updated` maps to it with source `card_management`) and the
 * specification reading's `network_token.active` / `network_token.suspended` (gap decisions,
 * "Network token notifications"). Any other `network_token.*` kind is type `other`, its wire name
 * kept in `event`.
 */
export const NETWORK_TOKEN_EVENT_TYPES = [
  'network_token.updated',
  'network_token.active',
  'network_token.suspended',
] as const;

/** One of {@link NETWORK_TOKEN_EVENT_TYPES}, or `other` (an unknown kind, kept as sent in `event`). */
export type NetworkTokenEventType = (typeof NETWORK_TOKEN_EVENT_TYPES)[number] | 'other';

/** Prefix of the `event` of every network token notification of the vault's network token area. */
export const NETWORK_TOKEN_EVENT_PREFIX = 'network_token.';

/**
 * A network token notification as the gateway keeps it, `details` members lifted to the top level
 * and renamed to camelCase. Documented `details` (§8, the provider's `network_token.updated`
 * example): `card_bin`, `card_last4`, `card_exp_month`/`card_exp_year` (strings), `exp_month`/
 * `exp_year` (the token's expiry), `network_token_id`, `network_token_last4`, `pan_alias`, `state`
 * (e.g. `CARD_UPDATED`), `tenant_id`, `created_at`, `updated_at` (zone-less, read as UTC). The
 * specification reading's `expires_at` (`YYYY-MM`) and `occurred_at` are read too. Only `id`,
 * `type`, `source`, `tenant` and `timestamp` are always present. The token number itself
 * (`details.network_token`) is never kept.
 *
 * - `panAlias`: `details.pan_alias` (letters, digits, `_`; at most 128, PAN-masked), the alias the
 *   token was provisioned with; it names the token in `GET /network-tokens/{pan_alias}`.
 * - `state`: `details.state` as sent (an open set: `ACTIVE`, `SUSPENDED`, `CARD_UPDATED`, …);
 *   absent when it holds a card number.
 * - `networkTokenId`, `paymentAccountReference`: as sent, masked (card numbers, security codes).
 * - `expiresAt`: the token's expiry `YYYY-MM` (`expires_at`, or `exp_year` and `exp_month`).
 * - `cardExpMonth` 1-12, `cardExpYear` four digits; `cardBin` 6-8 digits; `cardLast4`,
 *   `networkTokenLast4` 4 digits.
 *
 * Live subscribers all receive the same instance, so it is frozen.
 */
export interface NetworkTokenEvent extends SenderMembers {
  readonly id: string;
  readonly type: NetworkTokenEventType;
  readonly event?: string;
  readonly source: NotificationSource;
  readonly tenant: string;
  readonly panAlias?: string;
  readonly state?: string;
  readonly networkTokenId?: string;
  readonly networkTokenLast4?: string;
  readonly expiresAt?: string;
  readonly cardBin?: string;
  readonly cardLast4?: string;
  readonly cardExpMonth?: number;
  readonly cardExpYear?: number;
  readonly paymentAccountReference?: string;
  readonly timestamp: string;
  /** See src/events/notification-envelope.ts {@link SettledTimestamp}. */
  readonly timestampFlag?: TimestampFlag;
  readonly sentTimestamp?: string;
  readonly occurredAt?: string;
  readonly createdAt?: string;
  readonly updatedAt?: string;
}

/** Result of {@link parseNetworkTokenNotification}. */
export type ParseNetworkTokenNotificationResult =
  | { ok: true; event: NetworkTokenEvent }
  | { ok: false; reason: UnmappedReason };

const KNOWN_TYPES: ReadonlySet<string> = new Set(NETWORK_TOKEN_EVENT_TYPES);

/** The token's expiry `YYYY-MM`: `expires_at` when usable, else from `exp_year` and `exp_month`. */
function readTokenExpiry(details: Record<string, unknown>): string | undefined {
  const expiresAt = details.expires_at;
  if (typeof expiresAt === 'string' && /^\d{4}-(?:0[1-9]|1[0-2])$/.test(expiresAt)) return expiresAt;
  const month = readMonth(details.exp_month);
  const year = readYear(details.exp_year);
  return month !== undefined && year !== undefined ? `${year}-${String(month).padStart(2, '0')}` : undefined;
}

/** `details.pan_alias`: letters, digits and `_` (a `tok_` or format-preserving alias), PAN-masked. */
function readPanAlias(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_]{1,128}$/.test(value)
    ? readText(value, MAX_IDENTIFIER_CHARS)
    : undefined;
}

/**
 * A state name: letters, digits, `_` or `-`, at most 64 (e.g. `ACTIVE`, `CARD_UPDATED`); a state
 * holding a card number is dropped.
 */
function readState(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(value) && isUnmasked(value)
    ? value
    : undefined;
}

/**
 * Maps a read envelope of the network token family to a {@link NetworkTokenEvent} (frozen); every
 * details member is optional.
 * @param receivedAt ISO 8601 time of receipt: the `timestamp` when the notification has none usable.
 * @param maxFutureSkewMs how far after receipt `timestamp` may be before it is flagged (see
 *   {@link settleTimestamp}).
 */
export function networkTokenEventOf(
  envelope: Envelope,
  receivedAt: string,
  maxFutureSkewMs = DEFAULT_MAX_FUTURE_SKEW_MS,
): NetworkTokenEvent {
  const { details, event } = envelope;
  const canonical = `network_token.${event.kind}`;
  const members = definedOnly({
    panAlias: readPanAlias(details.pan_alias),
    state: readState(details.state),
    networkTokenId: readText(details.network_token_id, 128),
    networkTokenLast4: readDigits(details.network_token_last4, 4),
    expiresAt: readTokenExpiry(details),
    cardBin: readDigits(details.card_bin, 6, 8),
    cardLast4: readDigits(details.card_last4, 4),
    cardExpMonth: readMonth(details.card_exp_month),
    cardExpYear: readYear(details.card_exp_year),
    paymentAccountReference: readText(details.payment_account_reference, 64),
    occurredAt: readTimestamp(details.occurred_at),
    createdAt: readTimestamp(details.created_at),
    updatedAt: readTimestamp(details.updated_at),
  });
  const tokenEvent: NetworkTokenEvent = {
    id: envelope.id,
    type: KNOWN_TYPES.has(canonical) ? (canonical as NetworkTokenEventType) : 'other',
    ...(event.name !== undefined ? { event: event.name } : {}),
    source: event.source,
    tenant: envelope.tenant,
    ...settleTimestamp(envelope, readTimestamp(details.updated_at), receivedAt, maxFutureSkewMs),
    ...members,
    ...readSenderMembers(envelope.body),
  };
  return Object.freeze(tokenEvent);
}

/**
 * True when `body` is an object whose `event` is a string starting with `network_token.` or
 * `cmp_network_token.`: the receiver maps it with {@link parseNetworkTokenNotification}.
 */
export function isNetworkTokenNotification(body: unknown): boolean {
  if (!isPlainObject(body)) return false;
  const { event } = body;
  return (
    typeof event === 'string' &&
    (event.startsWith(NETWORK_TOKEN_EVENT_PREFIX) || event.startsWith(`cmp_${NETWORK_TOKEN_EVENT_PREFIX}`))
  );
}

/**
 * Reads a parsed webhook body as a network token notification, tolerantly (issue 19 item 3): any
 * object with a notification `id` and a vault (`tenant`, else `details.tenant_id`) maps to a
 * {@link NetworkTokenEvent}; `details` an object (as documented) or a JSON-encoded string; any
 * subset of its members; unknown members ignored.
 * @param body the result of `JSON.parse` of the raw request body.
 * @param receivedAt ISO 8601 time of receipt (fallback `timestamp`); now by default.
 * @returns `{ ok: true, event }` (frozen), or `{ ok: false, reason }` when it cannot be mapped.
 */
export function parseNetworkTokenNotification(
  body: unknown,
  receivedAt: string = new Date().toISOString(),
): ParseNetworkTokenNotificationResult {
  const read = readEnvelope(body);
  if (!read.ok) return { ok: false, reason: read.reason };
  return { ok: true, event: networkTokenEventOf(read.envelope, receivedAt) };
}
