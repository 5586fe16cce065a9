import { VAULT_ID_PATTERN } from '../contracts/common.ts';
import { redactCardData, redactCardText } from '../lib/redaction.ts';

/**
 * Tolerant reading of a signed notification's envelope and `details` (issue 19 item 3; contract §4
 * and §8: "a signed notification is never refused because of its shape"). Every reader returns the
 * member in a safe, bounded form or `undefined` when it is absent or unusable; none throws and none
 * refuses. Every string kept passes the one masker (src/lib/redaction.ts `redactCardText`: card
 * numbers however written, security codes after their name) before it is cut to its bound, so a cut
 * can never leave a card number unmasked; an identifier the masker would change (a card id, a state,
 * a reason code, a notification id holding a card number) is dropped, never kept masked or unmasked. §4's lengths describe what the provider usually
 * sends, not what the gateway may refuse.
 */

/** Longest kept `summary` or `description` (characters); longer text is truncated, not refused. */
export const MAX_FREE_TEXT_CHARS = 1024;
/** Longest kept identifier-like member (`fingerprint`, `org_id`, `integration_id`, ids, …), characters. */
export const MAX_IDENTIFIER_CHARS = 256;
/** Longest kept `event` name (characters). */
export const MAX_EVENT_NAME_CHARS = 128;

/**
 * Which of the provider's areas produced a notification, from its `event` prefix (§8 table):
 * `account_updater` (`au_card.*`), `network_tokens` (`network_token.*`), `card_management`
 * (`cmp_au_card.*`, `cmp_network_token.*`: the card interface's own notifications), `unknown`
 * (any other or no `event`).
 */
export type NotificationSource = 'account_updater' | 'network_tokens' | 'card_management' | 'unknown';

/** What a notification is about, from its `event` prefix: a card, a network token, or not known. */
export type NotificationFamily = 'card' | 'network_token' | 'unknown';

/**
 * A notification's `event`, classified.
 * - `name`: the wire name as sent (PAN-masked, at most {@link MAX_EVENT_NAME_CHARS}); undefined when
 *   `event` is not a string.
 * - `family`, `source`: from the prefix (see {@link NotificationSource}).
 * - `kind`: what follows the prefix (`updated`, `enrollment_failed`, …) when the family is known.
 */
export interface EventName {
  readonly name: string | undefined;
  readonly family: NotificationFamily;
  readonly source: NotificationSource;
  readonly kind: string | undefined;
}

const PREFIXES: readonly { prefix: string; family: NotificationFamily; source: NotificationSource }[] = [
  { prefix: 'cmp_au_card.', family: 'card', source: 'card_management' },
  { prefix: 'au_card.', family: 'card', source: 'account_updater' },
  { prefix: 'cmp_network_token.', family: 'network_token', source: 'card_management' },
  { prefix: 'network_token.', family: 'network_token', source: 'network_tokens' },
];

/** Classifies `event` (any JSON value) by its prefix; see {@link EventName}. */
export function classifyEvent(event: unknown): EventName {
  const name = readText(event, MAX_EVENT_NAME_CHARS);
  if (name === undefined) return { name, family: 'unknown', source: 'unknown', kind: undefined };
  for (const { prefix, family, source } of PREFIXES) {
    if (name.startsWith(prefix)) return { name, family, source, kind: name.slice(prefix.length) };
  }
  return { name, family: 'unknown', source: 'unknown', kind: undefined };
}

/**
 * A string member, masked ({@link redactCardText}), then cut to `max` characters (never splitting a
 * surrogate pair); undefined when `value` is not a string or is empty.
 */
export function readText(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  // Bounded before masking too, so a megabyte of digits costs no more than the bound.
  const masked = redactCardText(value.length > 4 * max ? value.slice(0, 4 * max) : value);
  if (masked.length <= max) return masked;
  let cut = masked.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut;
}

const TIMESTAMP =
  /^(\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))[T ]([01]\d|2[0-3])(:[0-5]\d:[0-5]\d)(\.\d{1,9})?(Z|z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/;

/**
 * An ISO 8601 date-time with or without a zone, normalised to `YYYY-MM-DDTHH:mm:ss[.ffffff](Z|±HH:MM)`:
 * a zone-less value is read as UTC (the documented network token times, e.g.
 * `2024-12-12T09:59:44.667670`), fractions beyond microseconds are cut, `+HHMM` becomes `+HH:MM`.
 * Undefined for anything else (not refused: the member is then treated as absent).
 */
export function readTimestamp(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 40) return undefined;
  const match = TIMESTAMP.exec(value);
  if (!match) return undefined;
  const [, date, hour, rest, fraction, zone] = match;
  const normalisedZone =
    zone === undefined || zone === 'Z' || zone === 'z'
      ? 'Z'
      : zone.length === 5
        ? `${zone.slice(0, 3)}:${zone.slice(3)}`
        : zone;
  const normalised = `${date}T${hour}${rest}${fraction ? fraction.slice(0, 7) : ''}${normalisedZone}`;
  return Number.isNaN(Date.parse(normalised)) || !isRealDate(date!) ? undefined : normalised;
}

/** True when `YYYY-MM-DD` names a day of the calendar (Date.parse rolls 2024-02-30 over to March 1). */
function isRealDate(date: string): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const parsed = new Date(Date.UTC(year, month - 1, day));
  return (
    parsed.getUTCFullYear() === year && parsed.getUTCMonth() === month - 1 && parsed.getUTCDate() === day
  );
}

/** Default of how far ahead of its receipt a notification's time may be (ms; `WEBHOOK_MAX_FUTURE_SKEW_S`). */
export const DEFAULT_MAX_FUTURE_SKEW_MS = 300_000;

/** Longest kept text of a flagged `timestamp` as sent (characters). */
export const MAX_SENT_TIMESTAMP_CHARS = 64;

/**
 * Why an event's own time could not be used: `future` (more than the allowed skew after its
 * receipt), `invalid` (a `timestamp` was sent but is no date-time, or no real date, e.g. 2024-02-30).
 */
export type TimestampFlag = 'future' | 'invalid';

/**
 * An event's `timestamp` once checked: the notification's own time, or, when that is flagged
 * (`timestampFlag`), a usable fallback member or the time of receipt; `sentTimestamp` then keeps
 * what was sent (PAN-masked, at most {@link MAX_SENT_TIMESTAMP_CHARS}). A flagged event takes no
 * part in the out-of-order marker of its subject (src/events/event-log.ts `LogEvent.timestampFlag`).
 */
export interface SettledTimestamp {
  readonly timestamp: string;
  readonly timestampFlag?: TimestampFlag;
  readonly sentTimestamp?: string;
}

/**
 * Settles the `timestamp` of the event of `envelope` ({@link SettledTimestamp}).
 * @param fallback the kind's own time member (normalised) used when the envelope has none.
 * @param receivedAt ISO 8601 time of receipt.
 * @param maxFutureSkewMs how far after `receivedAt` the time may be before it is flagged `future`.
 */
export function settleTimestamp(
  envelope: Envelope,
  fallback: string | undefined,
  receivedAt: string,
  maxFutureSkewMs: number,
): SettledTimestamp {
  const sent = envelope.body.timestamp;
  const invalid = typeof sent === 'string' && sent.length > 0 && readTimestamp(sent) === undefined;
  const candidate = envelope.timestamp ?? fallback ?? receivedAt;
  if (Date.parse(candidate) > Date.parse(receivedAt) + maxFutureSkewMs) {
    return {
      timestamp: receivedAt,
      timestampFlag: invalid ? 'invalid' : 'future',
      sentTimestamp: invalid ? readText(sent, MAX_SENT_TIMESTAMP_CHARS)! : candidate,
    };
  }
  if (invalid) {
    return {
      timestamp: candidate,
      timestampFlag: 'invalid',
      sentTimestamp: readText(sent, MAX_SENT_TIMESTAMP_CHARS)!,
    };
  }
  return { timestamp: candidate };
}

/** The vault id of `tenant`: 11 letters or digits (contract §2), else undefined. */
export function readVaultId(value: unknown): string | undefined {
  return typeof value === 'string' && VAULT_ID_PATTERN.test(value) ? value : undefined;
}

const NOTIFICATION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * The notification `id`, kept exactly as sent so redeliveries are recognised: a UUID (what the
 * provider sends), or any other 1-128 letters, digits, `.`, `_`, `:`, `-` starting with a letter or
 * digit unless it holds something the PAN masker would mask (such an id is unusable: it is never
 * echoed). Else undefined.
 */
export function readNotificationId(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (UUID.test(value)) return value;
  return NOTIFICATION_ID.test(value) && isUnmasked(value) ? value : undefined;
}

/**
 * `details`, decoded: a JSON object, or a string holding one (§8: both occur). Undefined for
 * anything else (absent, a string that is not JSON, an array); never throws.
 */
export function readDetails(value: unknown): Record<string, unknown> | undefined {
  let decoded = value;
  if (typeof value === 'string') {
    try {
      decoded = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return isPlainObject(decoded) ? decoded : undefined;
}

/** True for a JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An integer in `[min, max]`, from a JSON number or a string of digits; else undefined. */
export function readInteger(value: unknown, min: number, max: number): number | undefined {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d{1,10}$/.test(value)
        ? Number(value)
        : NaN;
  return Number.isInteger(number) && number >= min && number <= max ? number : undefined;
}

/** An expiry month 1-12 (number or 1-2 digit string); else undefined. */
export function readMonth(value: unknown): number | undefined {
  if (typeof value === 'string' && !/^\d{1,2}$/.test(value)) return undefined;
  return readInteger(value, 1, 12);
}

/** An expiry year of two (read as 20YY) or four digits (number or string); else undefined. */
export function readYear(value: unknown): number | undefined {
  if (typeof value === 'string' && !/^(?:\d{2}|\d{4})$/.test(value)) return undefined;
  const year = readInteger(value, 0, 9999);
  if (year === undefined) return undefined;
  if (year <= 99) return 2000 + year;
  return year >= 1000 ? year : undefined;
}

/** An expiry date from a notification's `MMYY` member. `month` 1-12, `year` four digits (20YY). */
export interface CardExpiry {
  month: number;
  year: number;
}

/**
 * `MMYY` sent as a 4-character string or a number (which loses a leading zero: 129 is 0129); a
 * month outside 1-12 or any other shape is undefined.
 */
export function readExpirationDate(value: unknown): Readonly<CardExpiry> | undefined {
  let mmyy: string;
  if (typeof value === 'string' && /^\d{4}$/.test(value)) mmyy = value;
  else if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 9999)
    mmyy = String(value).padStart(4, '0');
  else return undefined;
  const month = Number(mmyy.slice(0, 2));
  if (month < 1 || month > 12) return undefined;
  return Object.freeze({ month, year: 2000 + Number(mmyy.slice(2)) });
}

/**
 * A masked account number that can show at most the BIN and last four: any string of 12-19 digits
 * or mask characters (`*`, `X`, `x`, `•`; spaces and dashes dropped) is re-masked so everything but
 * the first six and last four is `*` (a full PAN sent by mistake comes out masked too). Undefined
 * for anything else.
 */
export function readMaskedAccountNumber(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 40) return undefined;
  const compact = value.replace(/[ -]/g, '');
  if (!/^[\d*Xx•]{12,19}$/.test(compact)) return undefined;
  return `${compact.slice(0, 6)}${'*'.repeat(compact.length - 10)}${compact.slice(-4)}`;
}

/**
 * A card id: `CRD` and 1-64 letters or digits (25 in v1, 52 in the card interface's test table, §8),
 * kept exactly as sent; undefined (dropped) when it holds a card number (`CRD4000056655665556`):
 * a masked card id would name no card.
 */
export function readCardId(value: unknown): string | undefined {
  return typeof value === 'string' && /^CRD[A-Za-z0-9]{1,64}$/.test(value) && isUnmasked(value)
    ? value
    : undefined;
}

/**
 * True when the one masker leaves `value` as it is: an identifier read from a notification is kept
 * only then (one holding a card number or a security code is dropped instead).
 */
export function isUnmasked(value: string): boolean {
  return redactCardText(value) === value;
}

/**
 * `value` with every card number and security code masked ({@link redactCardData}, members joined:
 * a number split over sibling members or array items is found too): the form in which anything read
 * from a notification beyond its mapped members is kept.
 */
export function maskNotificationValue<T>(value: T): T {
  return redactCardData(value, { joinMembers: true });
}

/** A string of exactly `digits` digits (e.g. last four), or one of `min`-`max` digits; else undefined. */
export function readDigits(value: unknown, min: number, max = min): string | undefined {
  const text = typeof value === 'number' && Number.isInteger(value) && value >= 0 ? String(value) : value;
  return typeof text === 'string' && text.length >= min && text.length <= max && /^\d+$/.test(text)
    ? text
    : undefined;
}

/** The envelope members every event kind carries from its notification; see {@link readSenderMembers}. */
export interface SenderMembers {
  readonly fingerprint?: string;
  readonly grouping?: string;
  readonly occurrence?: number;
  readonly orgId?: string;
  readonly integrationId?: string;
  readonly summary?: string;
  readonly description?: string;
}

/**
 * The sender's envelope members (contract §4), each present only when usable: identifiers and
 * `grouping` (an open set: `exp_repeat`, `every_single`, `high_rate`, …) PAN-masked and cut to
 * {@link MAX_IDENTIFIER_CHARS}, free text (`summary`, `description`) PAN-masked and cut to
 * {@link MAX_FREE_TEXT_CHARS}, `occurrence` a non-negative integer.
 */
export function readSenderMembers(body: Record<string, unknown>): SenderMembers {
  const members: Record<string, string | number | undefined> = {
    fingerprint: readText(body.fingerprint, MAX_IDENTIFIER_CHARS),
    grouping: readText(body.grouping, 64),
    occurrence: readInteger(body.occurrence, 0, 1_000_000_000),
    orgId: readText(body.org_id, MAX_IDENTIFIER_CHARS),
    integrationId: readText(body.integration_id, MAX_IDENTIFIER_CHARS),
    summary: readText(body.summary, MAX_FREE_TEXT_CHARS),
    description: readText(body.description, MAX_FREE_TEXT_CHARS),
  };
  return definedOnly(members) as SenderMembers;
}

/** A copy of `record` without its undefined members (so optional members are absent, not undefined). */
export function definedOnly<T extends Record<string, unknown>>(record: T): Partial<T> {
  const copy: Record<string, unknown> = {};
  for (const key in record) if (record[key] !== undefined) copy[key] = record[key];
  return copy as Partial<T>;
}

/**
 * Why a signed notification could not be mapped to an event: `not-an-object` (the JSON body is an
 * array, string, number, …), `no-tenant` (no readable vault id: `tenant`, else `details.tenant_id`),
 * `no-id` (no readable notification `id`, so redeliveries could not be recognised), `not-utf8` (the
 * body is not UTF-8 text: kept as bytes, see src/events/unmapped-notification.ts).
 */
export type UnmappedReason = 'not-an-object' | 'no-tenant' | 'no-id' | 'not-utf8';

/** The members every mapped notification starts from; see {@link readEnvelope}. */
export interface Envelope {
  readonly body: Record<string, unknown>;
  readonly id: string;
  readonly tenant: string;
  readonly event: EventName;
  /** `details` decoded (an empty object when absent or unusable). */
  readonly details: Record<string, unknown>;
  /** `timestamp`, else `details.occurred_at`, normalised; undefined when neither is usable. */
  readonly timestamp: string | undefined;
}

/** Result of {@link readEnvelope}. */
export type EnvelopeResult =
  | { ok: true; envelope: Envelope }
  | { ok: false; reason: UnmappedReason; tenant?: string; id?: string; event?: string };

/**
 * Reads what every notification needs to be mapped: an object with a notification `id`, a vault
 * (`tenant`, else `details.tenant_id`, for every kind) and whatever `event` it names.
 * Anything else is an {@link UnmappedReason}, with the members that could be read.
 */
export function readEnvelope(json: unknown): EnvelopeResult {
  if (!isPlainObject(json)) return { ok: false, reason: 'not-an-object' };
  const event = classifyEvent(json.event);
  const details = readDetails(json.details) ?? {};
  // Card and network token notifications alike may name their vault only in `details.tenant_id`.
  const tenant = readVaultId(json.tenant) ?? readVaultId(details.tenant_id);
  const id = readNotificationId(json.id);
  if (tenant === undefined || id === undefined) {
    const known = definedOnly({ tenant, id, event: event.name });
    return { ok: false, reason: tenant === undefined ? 'no-tenant' : 'no-id', ...known };
  }
  return {
    ok: true,
    envelope: {
      body: json,
      id,
      tenant,
      event,
      details,
      timestamp: readTimestamp(json.timestamp) ?? readTimestamp(details.occurred_at),
    },
  };
}
