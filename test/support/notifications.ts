import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { SandboxWire } from '../../src/contracts/wire-reading.ts';
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
  /**
   * Members of the decoded `details` to replace (`undefined` removes one); re-encoded afterwards in
   * the form the wire sends (an object on the documented wire, a JSON string on the specification's).
   */
  details?: Record<string, unknown>;
  /** Members of the envelope to replace (`undefined` removes one), applied last. */
  envelope?: Record<string, unknown>;
  /**
   * The sandbox's wire reading: `specification` (default here: `network_token.active` /
   * `.suspended`, details a JSON string) or `documented` (`network_token.updated`, details an object).
   */
  wire?: SandboxWire;
}

/**
 * A network token notification body exactly as the embedded sandbox builds it in `wire`'s reading
 * (token last four 4821, expiring 2030-12, card 510026…1001 expiring 2029-12), then overridden.
 */
export function networkTokenNotification(
  overrides: NetworkTokenNotificationOverrides = {},
): NotificationBody {
  const now = Date.now();
  const { envelope } = buildNetworkTokenNotification(
    {
      vault: overrides.tenant ?? 'tntsandbox1',
      panAlias: overrides.panAlias ?? 'tok_sandbox_DurabilityAlias0001',
      state: overrides.state ?? 'ACTIVE',
      networkTokenLast4: '4821',
      expiresAt: '2030-12',
      card: { bin: '510026', last4: '1001', expiresAt: '2029-12' },
      createdAtMs: overrides.createdAtMs ?? now - 1_000,
      occurredAtMs: overrides.occurredAtMs ?? now,
    },
    overrides.wire ?? 'specification',
  );
  const body: Record<string, unknown> = { ...envelope };
  if (overrides.details) {
    const asString = typeof envelope.details === 'string';
    const details: Record<string, unknown> =
      typeof envelope.details === 'string' ? JSON.parse(envelope.details) : { ...envelope.details };
    override(details, overrides.details);
    body.details = asString ? JSON.stringify(details) : details;
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
 * through the known ones, each then overridden by `each(index)` (its vault, kind or timestamp); for bursts.
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
  if (!result.ok) throw new Error(`unmappable test notification: ${result.reason}`);
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

/**
 * The documented notifications (sandbox contract §8; /work/shared/provider-docs/examples.json
 * WEBHOOK entries), for the receiver and gateway tests.
 */

/** The v1 `au_card.*` details members per event (§8 table, the provider's "Details" column). */
export const DOCUMENTED_V1_DETAILS: Readonly<Record<string, readonly string[]>> = {
  'au_card.updated': [
    'card_id',
    'old_account_number',
    'old_expiration_date',
    'new_expiration_date',
    'occurred_at',
  ],
  'au_card.expired': [
    'card_id',
    'old_account_number',
    'old_expiration_date',
    'new_expiration_date',
    'occurred_at',
  ],
  'au_card.closed': ['card_id', 'old_account_number', 'occurred_at'],
  'au_card.non_participating': ['card_id', 'occurred_at'],
  'au_card.contact_cardholder_advice': [
    'card_id',
    'old_account_number',
    'old_expiration_date',
    'occurred_at',
  ],
};

/**
 * A v1 notification of `event` carrying only its documented details members (taken from the
 * default {@link notification}'s details), as a JSON string.
 */
export function documentedV1Notification(
  event: string,
  overrides: NotificationOverrides = {},
): NotificationBody {
  const members = DOCUMENTED_V1_DETAILS[event];
  if (!members) throw new Error(`no documented details for ${event}`);
  const removed = Object.fromEntries(
    NOTIFICATION_DETAILS_MEMBERS.filter((member) => !members.includes(member)).map((member) => [
      member,
      undefined,
    ]),
  );
  return notification({ ...overrides, event, details: { ...removed, ...overrides.details } });
}

/** The card interface's test card ids (52 characters) by test card number (§8; examples.json). */
export const CARD_INTERFACE_TEST_CARD_IDS: Readonly<Record<string, string>> = {
  '5100260000079200': 'CRDnKQt89XXFRQVBEzcRvkhvmhs5rpBvxkv3PbeAFPB52zFFqjCR',
  '5100260000069201': 'CRDqKgQbzM9cUWNUAQR5EFu9BrZuSLP5tgqxadbJBJdqgc2iKQ5i',
  '5100260000059202': 'CRDoy3ak2ipNi9Fac1tugukHQQi2JWkKdutozwHdd9MWZk9tj31J',
  '5100260000049203': 'CRDnedYQWP8U4qLZ8dELJTPa3iC3A9ANryT53dAeL8Nmdg21YnZ0',
  '5100260000039204': 'CRDnExWG9xEu5khrT6Xw3pqi6CEtVei3yeogHgD8GG7jR6fxK2af',
};

/**
 * The provider's documented `network_token.updated` notification, literally as in examples.json
 * (details a JSON object, zone-less times with microseconds, tenant tntt0fzksdr); `overrides`
 * replace envelope members (e.g. a fresh `id`, or `tenant` to route it to a test vault).
 */
export function documentedNetworkTokenNotification(
  overrides: Record<string, unknown> = {},
): NotificationBody {
  const body: Record<string, unknown> = {
    description: 'Network Token updated',
    details: {
      card_bin: '511410',
      card_exp_month: '12',
      card_exp_year: '2025',
      card_last4: '2293',
      created_at: '2024-12-12T09:59:44.667670',
      exp_month: '10',
      exp_year: '2027',
      network_token: '',
      network_token_id: '0e28d9f6-d8a3-43ca-9bd8-b99c477c2b4c',
      network_token_last4: '5022',
      pan_alias: '5114103XX3542293',
      payment_account_reference: '',
      state: 'CARD_UPDATED',
      tenant_id: 'tntt0fzksdr',
      updated_at: '2024-12-12T09:59:44.667670',
    },
    event: 'network_token.updated',
    fingerprint: '2c365dba9f2bffbc16b2a487d6e95be8f693c3de5c049bbc3f87b4fdc2ab5f24',
    grouping: 'every_single',
    id: 'd82e56a0-3b6e-417a-a7cb-674f84d806e3',
    integration_id: 'INcBi2ziCXeweqC6VvDx6keX',
    occurrence: 1,
    org_id: 'ACgzdqxQb4RyPyWsw97DVDDD',
    producer: { application_name: 'calm-api', application_protocol: 'http' },
    scope: 'vault',
    summary: 'A Network Token for 5114103XX3542293 pan alias has been updated in vault tntt0fzksdr',
    tenant: 'tntt0fzksdr',
    timestamp: '2024-12-16T18:30:25.383Z',
  };
  override(body, overrides);
  return body as NotificationBody;
}
