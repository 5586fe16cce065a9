import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  CARD_EVENT_TYPES,
  type CardEvent,
  type CardEventType,
  parseCardNotification,
} from '../../src/events/card-event.ts';
import { buildNetworkTokenNotification } from '../../src/sandbox/network-tokens.ts';

/**
 * The one notification builder of the suite: webhook bodies of the card-event receiver as the sandbox
 * sends them (contract §4, the specification's "Notification body fields" table, gap decisions), for
 * the parser unit tests, the receiver over HTTP and the gateway processes alike. Every member can be
 * replaced or removed (`undefined`) so that a test states only what it changes.
 */

/** A notification body before JSON encoding, with its UUID `id`. */
export type NotificationBody = Record<string, unknown> & { id: string };

/** A 25-character card id (`CRD` + 22 Base62 characters), the default `details.card_id`. */
export const TEST_CARD_ID = 'CRDabcdefghijklmnopqrstuv';

/** The `integration_id` the sandbox gives each vault's notifications (24 characters). */
export const INTEGRATION_IDS: Record<string, string> = {
  tntsandbox1: 'Integ1abcdefghijklmnopqr',
  tntsandbox2: 'Integ2abcdefghijklmnopqr',
};

/** Options of {@link notification}; every member is optional. */
export interface NotificationOverrides {
  /** The vault (`tenant`); tntsandbox1 by default. */
  tenant?: string;
  /** One of the eight notification kinds; `au_card.updated` by default. */
  event?: CardEventType | string;
  /** `details.card_id`; {@link TEST_CARD_ID} by default. */
  cardId?: string;
  /** The envelope `timestamp` (ISO 8601); a fixed instant of 2026-11-21 by default. */
  timestamp?: string;
  /** Members of the decoded `details` to replace (`undefined` removes one). */
  details?: Record<string, unknown>;
  /** Replaces the encoded details string entirely. */
  rawDetails?: string;
  /** Members of the envelope to replace (`undefined` removes one), applied last. */
  envelope?: Record<string, unknown>;
}

/** Replaces the members of `target` named in `overrides`; an `undefined` value removes the member. */
function override(target: Record<string, unknown>, overrides: Record<string, unknown> = {}): void {
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete target[key];
    else target[key] = value;
  }
}

/**
 * A valid card notification body with a fresh UUID `id`, every length exactly per the specification's
 * table; `fingerprint` is SHA-256 hex of event + details + tenant.
 */
export function notification(overrides: NotificationOverrides = {}): NotificationBody {
  const tenant = overrides.tenant ?? 'tntsandbox1';
  const event = overrides.event ?? 'au_card.updated';
  const cardId = overrides.cardId ?? TEST_CARD_ID;
  const detailsObject: Record<string, unknown> = {
    card_id: cardId,
    occurred_at: '2026-11-21T05:01:02.123Z',
    new_account_number: '510026******1001',
    old_account_number: '510026******2002',
    new_expiration_date: '1229',
    old_expiration_date: '0126',
    exp_month: 12,
    exp_year: 2029,
    created_at: '2026-11-21T05:01:02Z',
  };
  override(detailsObject, overrides.details);
  const details = overrides.rawDetails ?? JSON.stringify(detailsObject);
  const body: Record<string, unknown> = {
    id: randomUUID(),
    event,
    timestamp: overrides.timestamp ?? '2026-11-21T05:01:03.456Z',
    description: 'Card account updater event sent',
    summary: `Card ${cardId} ${event}`,
    details,
    fingerprint: createHash('sha256').update(`${event}${details}${tenant}`, 'utf8').digest('hex'),
    grouping: 'every_single',
    integration_id: INTEGRATION_IDS[tenant] ?? 'IntegXabcdefghijklmnopqr',
    occurrence: 1,
    org_id: 'ACsandbox000000000000001',
    producer: { application_name: 'account-updater', application_protocol: 'https' },
    scope: 'cards',
    tenant,
  };
  override(body, overrides.envelope);
  return body as NotificationBody;
}

/** Options of {@link networkTokenNotification}; every member is optional. */
export interface NetworkTokenNotificationOverrides {
  /** The vault; tntsandbox1 by default. */
  tenant?: string;
  /** `details.pan_alias`; `tok_sandbox_DurabilityAlias0001` by default. */
  panAlias?: string;
  /** The token state the notification announces; ACTIVE by default. */
  state?: 'ACTIVE' | 'SUSPENDED';
  /** When the token was created and the event occurred (ms since the epoch); one second ago and now by default. */
  createdAtMs?: number;
  occurredAtMs?: number;
  /** Members of the decoded `details` to replace (`undefined` removes one); re-encoded afterwards. */
  details?: Record<string, unknown>;
  /** Members of the envelope to replace (`undefined` removes one), applied last. */
  envelope?: Record<string, unknown>;
}

/**
 * A valid network token notification body exactly as the embedded sandbox builds it (token last four
 * 4821, expiring 2030-12), then overridden.
 */
export function networkTokenNotification(
  overrides: NetworkTokenNotificationOverrides = {},
): NotificationBody {
  const now = Date.now();
  const { envelope } = buildNetworkTokenNotification({
    vault: overrides.tenant ?? 'tntsandbox1',
    panAlias: overrides.panAlias ?? 'tok_sandbox_DurabilityAlias0001',
    state: overrides.state ?? 'ACTIVE',
    networkTokenLast4: '4821',
    expiresAt: '2030-12',
    createdAtMs: overrides.createdAtMs ?? now - 1_000,
    occurredAtMs: overrides.occurredAtMs ?? now,
  });
  const body: Record<string, unknown> = { ...envelope };
  if (overrides.details) {
    const details = JSON.parse(envelope.details as string) as Record<string, unknown>;
    override(details, overrides.details);
    body.details = JSON.stringify(details);
  }
  override(body, overrides.envelope);
  return body as NotificationBody;
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random card id of the notification table's shape: `CRD` + 22 Base62 characters. */
export function randomCardId(): string {
  return `CRD${[...randomBytes(22)].map((byte) => BASE62[byte % 62]).join('')}`;
}

/**
 * `count` card notifications for as many cards of their own ({@link randomCardId}), their kinds cycling
 * through the eight, each then overridden by `each(index)` (its vault, kind or timestamp); for bursts.
 */
export function cardNotificationBurst(
  count: number,
  each: (index: number) => NotificationOverrides = () => ({}),
): NotificationBody[] {
  return Array.from({ length: count }, (_, index) =>
    notification({
      cardId: randomCardId(),
      event: CARD_EVENT_TYPES[index % CARD_EVENT_TYPES.length],
      ...each(index),
    }),
  );
}

/**
 * A card event as the receiver stores it: what `parseCardNotification` makes of the default
 * {@link notification} (an `au_card.updated` of tntsandbox1 for {@link TEST_CARD_ID}, masked numbers),
 * so with a fresh UUID `id`, for the event logs and buses; `overrides` replace members afterwards.
 * @throws Error when the default notification does not parse (a broken builder, not a test outcome).
 */
export function cardEvent(overrides: Partial<CardEvent> = {}): CardEvent {
  const result = parseCardNotification(notification());
  if (!result.ok) throw new Error(`invalid test notification: ${JSON.stringify(result.issues)}`);
  return { ...result.event, ...overrides };
}

/** The members of a notification envelope, in the order of the specification's table. */
export const NOTIFICATION_ENVELOPE_MEMBERS = [
  'id',
  'event',
  'timestamp',
  'description',
  'summary',
  'details',
  'fingerprint',
  'grouping',
  'integration_id',
  'occurrence',
  'org_id',
  'producer',
  'scope',
  'tenant',
] as const;

/** The members of a card notification's decoded `details`, in the order of the specification's table. */
export const NOTIFICATION_DETAILS_MEMBERS = [
  'card_id',
  'occurred_at',
  'new_account_number',
  'old_account_number',
  'new_expiration_date',
  'old_expiration_date',
  'exp_month',
  'exp_year',
  'created_at',
] as const;
