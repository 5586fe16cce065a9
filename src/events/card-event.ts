import { z } from 'zod';
import { redactPans } from '../lib/pan.ts';

/**
 * Card lifecycle notification kinds that a webhook may carry: the `au_card.*` kinds of the
 * specification's "Event kinds" table whose names fit the notification table's `event` length of 14
 * to 33 characters. `au_card.valid` (13 characters) only appears in card check results, never in a
 * notification (gap decisions, "Webhook notifications").
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
] as const;

/** One of {@link CARD_EVENT_TYPES}. */
export type CardEventType = (typeof CARD_EVENT_TYPES)[number];

/** Grouping methods of the notification table's `grouping` field. */
export const CARD_EVENT_GROUPINGS = ['exp_repeat', 'every_single', 'high_rate'] as const;

/** One of {@link CARD_EVENT_GROUPINGS}. */
export type CardEventGrouping = (typeof CARD_EVENT_GROUPINGS)[number];

/** An expiry date from a notification's `MMYY` field. `month` 1-12, `year` four digits (20YY). */
export interface CardExpiry {
  month: number;
  year: number;
}

/**
 * A validated card lifecycle notification (specification "Notification body fields", contract §4),
 * with the members of the `details` JSON string lifted to the top level and renamed to camelCase.
 *
 * - `id`: the notification's UUID, the same on every retry (the bus drops repeats).
 * - `type`: the `event` field.
 * - `tenant`: the vault id (11 characters).
 * - `cardId`: `details.card_id`, `CRD…`, 25 characters.
 * - `timestamp`, `occurredAt`: ISO 8601 strings as received (24 to 26 characters).
 * - `createdAt`: `details.created_at`, `YYYY-MM-DDTHH:mm:ssZ` as received.
 * - `newAccountNumber`, `oldAccountNumber`: masked, 16 characters, at most BIN and last four digits.
 * - `newExpiry`, `oldExpiry`: from the `MMYY` fields.
 * - `expMonth` 1-12; `expYear` four digits (a two-digit year is read as 20YY).
 * - `fingerprint`: 64 lowercase hex characters.
 * - Sender text (`summary`, `description`, `orgId`, `integrationId`, `fingerprint`) has every
 *   Luhn-valid 13-19 digit window masked to BIN and last four (src/lib/pan.ts `redactPans`).
 *
 * Bus subscribers all receive the same instance, so it is frozen; memoize per-event work in a
 * WeakMap keyed by it.
 */
export interface CardEvent extends SenderMembers {
  readonly id: string;
  readonly type: CardEventType;
  readonly tenant: string;
  readonly cardId: string;
  readonly occurredAt?: string;
  readonly timestamp: string;
  readonly createdAt: string;
  readonly newAccountNumber: string;
  readonly oldAccountNumber: string;
  readonly newExpiry: Readonly<CardExpiry>;
  readonly oldExpiry: Readonly<CardExpiry>;
  readonly expMonth: number;
  readonly expYear: number;
}

/**
 * One reason a notification was refused.
 * - `path`: JSON pointer (RFC 6901) of the offending member, reading the `details` JSON string as the
 *   object it encodes (e.g. `/details/card_id`); `""` for the whole body.
 * - `message`: what is wrong and where; never the offending value.
 */
export interface NotificationIssue {
  path: string;
  message: string;
}

/** Result of {@link parseCardNotification}. */
export type ParseCardNotificationResult =
  | { ok: true; event: CardEvent }
  | { ok: false; issues: NotificationIssue[] };

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:?\d{2})?$/;
const CREATED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const MASK_CHARACTERS = '*Xx';

/**
 * What each envelope member shared by every notification kind must look like (contract §4, the
 * specification's "Notification body fields" table), by dotted path; `event` and the `details.*`
 * members are each kind's own. Issue messages are built only from such texts and the path, so no
 * message can echo a submitted value (zod's own messages are never used).
 */
export const ENVELOPE_EXPECTATIONS: Readonly<Record<string, string>> = {
  '': 'a JSON object',
  id: 'a UUID of 36 characters',
  timestamp: 'an ISO 8601 timestamp of 24 to 26 characters',
  description: 'a string of exactly 31 characters',
  summary: 'a string',
  details: 'a JSON-encoded object string',
  fingerprint: 'a SHA-256 hash of 64 lowercase hexadecimal characters',
  grouping: `one of ${CARD_EVENT_GROUPINGS.join(', ')}`,
  integration_id: 'a Base62 string of 24 characters',
  occurrence: 'an integer from 1 to 9',
  org_id: 'a string of 24 characters',
  producer: 'an object',
  'producer.application_name': 'a string',
  'producer.application_protocol': 'a string of 4 to 5 characters',
  scope: 'a string of 5 characters',
  tenant: 'a vault id of 11 letters or digits',
};

const CARD_EXPECTATIONS: Readonly<Record<string, string>> = {
  ...ENVELOPE_EXPECTATIONS,
  event: `one of ${CARD_EVENT_TYPES.join(', ')}`,
  'details.card_id': 'a card id of 25 characters starting with CRD',
  'details.occurred_at': 'an ISO 8601 timestamp of 24 to 26 characters',
  'details.new_account_number':
    'a masked account number of 16 characters showing at most the first six and last four digits',
  'details.old_account_number':
    'a masked account number of 16 characters showing at most the first six and last four digits',
  'details.new_expiration_date': 'an MMYY expiry date of 4 digits with a month from 01 to 12',
  'details.old_expiration_date': 'an MMYY expiry date of 4 digits with a month from 01 to 12',
  'details.exp_month': 'a month from 1 to 12 (1 or 2 digits)',
  'details.exp_year': 'a year of 2 or 4 digits',
  'details.created_at': 'a UTC timestamp of 20 characters (YYYY-MM-DDTHH:mm:ssZ)',
};

/** An ISO 8601 timestamp of 24 to 26 characters (`timestamp`, `details.occurred_at`), kept as sent. */
export const isoTimestamp = z
  .string()
  .min(24)
  .max(26)
  .regex(ISO_TIMESTAMP)
  .refine((value) => !Number.isNaN(Date.parse(value)));

/** `details.created_at`: `YYYY-MM-DDTHH:mm:ssZ` (20 characters), kept as sent. */
export const createdAtTimestamp = z
  .string()
  .regex(CREATED_AT)
  .refine((value) => !Number.isNaN(Date.parse(value)));

/** An optional member: absent and JSON `null` both mean "not sent" and come out as `undefined`. */
export const optionalMember = <T extends z.ZodType>(schema: T) =>
  schema
    .nullish()
    .transform((value): z.output<T> | undefined =>
      value === null ? undefined : (value as z.output<T> | undefined),
    );

/**
 * A masked account number: 16 characters, the middle six masked, the first six and last four each
 * either digits or masked. A value of digits only is refused even if it is 16 long.
 */
function isMaskedAccountNumber(value: string): boolean {
  if (value.length !== 16) return false;
  for (let i = 0; i < 16; i++) {
    const ch = value[i]!;
    const masked = MASK_CHARACTERS.includes(ch);
    const inBinOrLastFour = i < 6 || i >= 12;
    if (!masked && !(inBinOrLastFour && ch >= '0' && ch <= '9')) return false;
  }
  return true;
}

const maskedAccountNumber = z.string().refine(isMaskedAccountNumber);

/** `MMYY`, sent as a 4-character string or as a number (which loses a leading zero: 129 is 0129). */
const expirationDate = z
  .union([z.string().regex(/^\d{4}$/), z.number().int().min(0).max(9999)])
  .transform((value, ctx): CardExpiry => {
    const mmyy = typeof value === 'number' ? String(value).padStart(4, '0') : value;
    const month = Number(mmyy.slice(0, 2));
    if (month < 1 || month > 12) {
      ctx.addIssue({ code: 'custom', message: 'month out of range' });
      return z.NEVER;
    }
    return { month, year: 2000 + Number(mmyy.slice(2)) };
  });

const expMonth = z
  .union([z.number().int(), z.string().regex(/^\d{1,2}$/)])
  .transform(Number)
  .pipe(z.number().int().min(1).max(12));

/** Two digits are read as 20YY; three digits are refused as meaningless. */
const expYear = z
  .union([z.number().int().min(0), z.string().regex(/^(?:\d{2}|\d{4})$/)])
  .transform((value, ctx) => {
    const year = Number(value);
    if (typeof value === 'number' && !(year <= 99 || (year >= 1000 && year <= 9999))) {
      ctx.addIssue({ code: 'custom', message: 'not a two- or four-digit year' });
      return z.NEVER;
    }
    return year <= 99 ? 2000 + year : year;
  });

const cardDetailsObject = z.object({
  card_id: z.string().length(25).startsWith('CRD'),
  occurred_at: optionalMember(isoTimestamp),
  new_account_number: maskedAccountNumber,
  old_account_number: maskedAccountNumber,
  new_expiration_date: expirationDate,
  old_expiration_date: expirationDate,
  exp_month: expMonth,
  exp_year: expYear,
  created_at: createdAtTimestamp,
});

/**
 * The `details` member: a string holding JSON, decoded and then checked against `object`. Issues of
 * the decoded members carry paths under `details` (e.g. `details.card_id`).
 */
export function jsonObjectString<T extends z.ZodType>(object: T) {
  return z
    .string()
    .transform((raw, ctx): unknown => {
      try {
        return JSON.parse(raw);
      } catch {
        // The SyntaxError's message quotes the input, so it is not passed on.
        ctx.addIssue({ code: 'custom', message: 'not JSON' });
        return z.NEVER;
      }
    })
    .pipe(object);
}

/**
 * The notification envelope of contract §4 with this kind's `event` and `details` schemas. The member
 * order fixes the order of issues: `id`, `event`, `timestamp`, `description`, `summary`, `details`,
 * `fingerprint`, `grouping`, `integration_id`, `occurrence`, `org_id`, `producer`, `scope`, `tenant`.
 * Unknown members are stripped; `description`, `summary` and `producer` are optional (absent or null).
 */
export function notificationEnvelopeSchema<E extends z.ZodType, D extends z.ZodType>(event: E, details: D) {
  return z.object({
    id: z.string().length(36).regex(UUID),
    event,
    timestamp: isoTimestamp,
    description: optionalMember(z.string().length(31)),
    summary: optionalMember(z.string()),
    details,
    fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
    grouping: z.enum(CARD_EVENT_GROUPINGS),
    integration_id: z.string().regex(/^[A-Za-z0-9]{24}$/),
    occurrence: z.number().int().min(1).max(9),
    org_id: z.string().length(24),
    producer: optionalMember(
      z.object({
        application_name: optionalMember(z.string()),
        application_protocol: optionalMember(z.string().min(4).max(5)),
      }),
    ),
    scope: z.string().length(5),
    tenant: z.string().regex(/^[A-Za-z0-9]{11}$/),
  });
}

const cardNotificationSchema = notificationEnvelopeSchema(
  z.enum(CARD_EVENT_TYPES),
  jsonObjectString(cardDetailsObject),
);

/** True when nothing (or `null`) was sent at `path`, reading the `details` string as its JSON. */
function isAbsent(body: unknown, path: readonly PropertyKey[]): boolean {
  let node: unknown = body;
  for (const [index, part] of path.entries()) {
    if (index === 1 && path[0] === 'details' && typeof node === 'string') {
      try {
        node = JSON.parse(node);
      } catch {
        return false;
      }
    }
    if (node === null || typeof node !== 'object') return false;
    node = (node as Record<PropertyKey, unknown>)[part];
  }
  return node === undefined || node === null;
}

/** The envelope members every event kind carries from its notification; see {@link senderMembers}. */
export interface SenderMembers {
  readonly fingerprint: string;
  readonly grouping: CardEventGrouping;
  readonly occurrence: number;
  readonly orgId: string;
  readonly integrationId: string;
  readonly summary?: string;
  readonly description?: string;
}

/**
 * The envelope members every event kind carries from its notification (contract §4): the sender's
 * text and identifiers masked like every other output (deterministic, so grouping still works), free
 * text (`summary`, `description`) masked before the event is stored or delivered and present only
 * when sent; `grouping` and `occurrence` as sent.
 */
export function senderMembers(n: {
  fingerprint: string;
  grouping: CardEventGrouping;
  occurrence: number;
  org_id: string;
  integration_id: string;
  summary?: string | undefined;
  description?: string | undefined;
}): SenderMembers {
  return {
    fingerprint: redactPans(n.fingerprint),
    grouping: n.grouping,
    occurrence: n.occurrence,
    orgId: redactPans(n.org_id),
    integrationId: redactPans(n.integration_id),
    ...(n.summary !== undefined ? { summary: redactPans(n.summary) } : {}),
    ...(n.description !== undefined ? { description: redactPans(n.description) } : {}),
  };
}

/** RFC 6901 JSON pointer of a path (`~` and `/` escaped); `""` for the whole body. */
export function toPointer(path: readonly PropertyKey[]): string {
  return path.map((part) => `/${String(part).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/**
 * Maps the issues of a failed parse of `body` to {@link NotificationIssue}s: at most one per path, in
 * the order zod reports them, `"<path> is required"` for a member that is absent or `null`, else
 * `"<path> must be <expectations[path]>"` (`valid` for a path without an entry). Only the path and
 * the expectation texts are used, so no message can echo a submitted value.
 * @param expectations what each member must look like, by dotted path (e.g. `details.card_id`).
 */
export function notificationIssues(
  error: z.ZodError,
  body: unknown,
  expectations: Readonly<Record<string, string>>,
): NotificationIssue[] {
  const seen = new Set<string>();
  const issues: NotificationIssue[] = [];
  for (const issue of error.issues) {
    const dotted = issue.path.map(String).join('.');
    if (seen.has(dotted)) continue;
    seen.add(dotted);
    const where = dotted === '' ? 'the notification' : dotted;
    if (issue.path.length > 0 && isAbsent(body, issue.path)) {
      issues.push({ path: toPointer(issue.path), message: `${where} is required` });
    } else {
      issues.push({
        path: toPointer(issue.path),
        message: `${where} must be ${expectations[dotted] ?? 'valid'}`,
      });
    }
  }
  return issues;
}

/**
 * Validates a parsed webhook body against the specification's "Notification body fields" table and
 * the contract §4 envelope, and maps it to a {@link CardEvent}. `details` is mandatory here: its
 * members `card_id`, the account numbers and the expiry fields are mandatory in the table.
 * Unknown members are ignored; optional members may be absent or `null`.
 * @param body the result of `JSON.parse` of the raw request body.
 * @returns `{ ok: true, event }` (a frozen object), or `{ ok: false, issues }` with one issue per bad
 *   member (at most one per path), none carrying a submitted value.
 */
export function parseCardNotification(body: unknown): ParseCardNotificationResult {
  const parsed = cardNotificationSchema.safeParse(body);
  if (!parsed.success)
    return { ok: false, issues: notificationIssues(parsed.error, body, CARD_EXPECTATIONS) };
  const n = parsed.data;
  const d = n.details;
  const event: CardEvent = {
    id: n.id,
    type: n.event,
    tenant: n.tenant,
    cardId: d.card_id,
    ...(d.occurred_at !== undefined ? { occurredAt: d.occurred_at } : {}),
    timestamp: n.timestamp,
    createdAt: d.created_at,
    newAccountNumber: d.new_account_number,
    oldAccountNumber: d.old_account_number,
    newExpiry: Object.freeze(d.new_expiration_date),
    oldExpiry: Object.freeze(d.old_expiration_date),
    expMonth: d.exp_month,
    expYear: d.exp_year,
    ...senderMembers(n),
  };
  return { ok: true, event: Object.freeze(event) };
}
