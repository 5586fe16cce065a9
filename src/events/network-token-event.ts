import { z } from 'zod';
import { assertPanAlias } from '../upstream/network-tokens/schemas.ts';
import {
  createdAtTimestamp,
  ENVELOPE_EXPECTATIONS,
  isoTimestamp,
  jsonObjectString,
  type NotificationIssue,
  notificationEnvelopeSchema,
  notificationIssues,
  optionalMember,
  type SenderMembers,
  senderMembers,
  toPointer,
} from './card-event.ts';

/**
 * Network token notification kinds (gap decisions, "Network token notifications"): provisioning of a
 * network token reached `ACTIVE` or `SUSPENDED`. Both fit the notification table's `event` length of
 * 14 to 33 characters (20 and 23).
 */
export const NETWORK_TOKEN_EVENT_TYPES = ['network_token.active', 'network_token.suspended'] as const;

/** One of {@link NETWORK_TOKEN_EVENT_TYPES}. */
export type NetworkTokenEventType = (typeof NETWORK_TOKEN_EVENT_TYPES)[number];

/** The final state a network token notification reports. */
export type NetworkTokenEventState = 'ACTIVE' | 'SUSPENDED';

/** The state each event kind reports; `details.state` must agree with `event`. */
const STATE_OF_TYPE: Readonly<Record<NetworkTokenEventType, NetworkTokenEventState>> = {
  'network_token.active': 'ACTIVE',
  'network_token.suspended': 'SUSPENDED',
};

/** Prefix of the `event` of every network token notification (the receiver dispatches on it). */
export const NETWORK_TOKEN_EVENT_PREFIX = 'network_token.';

/**
 * A validated network token notification (gap decisions, "Network token notifications": the envelope
 * of contract §4 with network token `details`), with the members of the `details` JSON string lifted
 * to the top level and renamed to camelCase.
 *
 * - `id`: the notification's UUID, the same on every retry (the event log drops repeats of a tenant).
 * - `type`: the `event` field.
 * - `tenant`: the vault id (11 characters).
 * - `panAlias`: `details.pan_alias`, the alias provisioning was requested with (a `tok_` alias or a
 *   format-preserving alias; never a plain PAN). It names the token: `GET /network-tokens/{pan_alias}`.
 * - `state`: `details.state`, `ACTIVE` for `network_token.active`, `SUSPENDED` for
 *   `network_token.suspended`.
 * - `networkTokenLast4`: four digits of the token (not of the card).
 * - `expiresAt`: token expiry, `YYYY-MM`.
 * - `timestamp`, `occurredAt`: ISO 8601 strings as received (24 to 26 characters).
 * - `createdAt`: `details.created_at` (when provisioning was requested), `YYYY-MM-DDTHH:mm:ssZ`.
 * - `fingerprint`: 64 lowercase hex characters.
 * - Sender text (`summary`, `description`, `orgId`, `integrationId`, `fingerprint`) has every
 *   Luhn-valid 13-19 digit window masked to BIN and last four (src/lib/pan.ts `redactPans`).
 *
 * Live subscribers all receive the same instance, so it is frozen; memoize per-event work in a
 * WeakMap keyed by it.
 */
export interface NetworkTokenEvent extends SenderMembers {
  readonly id: string;
  readonly type: NetworkTokenEventType;
  readonly tenant: string;
  readonly panAlias: string;
  readonly state: NetworkTokenEventState;
  readonly networkTokenLast4: string;
  readonly expiresAt: string;
  readonly occurredAt?: string;
  readonly createdAt: string;
  readonly timestamp: string;
}

/** Result of {@link parseNetworkTokenNotification}. */
export type ParseNetworkTokenNotificationResult =
  | { ok: true; event: NetworkTokenEvent }
  | { ok: false; issues: NotificationIssue[] };

const EXPECTATIONS: Readonly<Record<string, string>> = {
  ...ENVELOPE_EXPECTATIONS,
  event: `one of ${NETWORK_TOKEN_EVENT_TYPES.join(', ')}`,
  'details.pan_alias':
    'a PAN alias (tok_ followed by up to 124 letters, digits or underscores, or a format-preserving alias), never a card number',
  'details.state': 'one of ACTIVE, SUSPENDED',
  'details.network_token_last4': 'a string of 4 digits',
  'details.expires_at': 'a YYYY-MM token expiry with a month from 01 to 12',
  'details.occurred_at': 'an ISO 8601 timestamp of 24 to 26 characters',
  'details.created_at': 'a UTC timestamp of 20 characters (YYYY-MM-DDTHH:mm:ssZ)',
};

/**
 * The alias check of the network tokens client, so every alias accepted here can name the token in
 * `GET /network-tokens/{pan_alias}`. A plain card number (all digits) fails it: a format-preserving
 * alias holds at least one letter.
 */
const panAlias = z.string().refine((value) => {
  try {
    assertPanAlias(value);
    return true;
  } catch {
    return false;
  }
});

const networkTokenDetailsObject = z.object({
  pan_alias: panAlias,
  state: z.enum(['ACTIVE', 'SUSPENDED']),
  network_token_last4: z.string().regex(/^\d{4}$/),
  expires_at: z.string().regex(/^\d{4}-(?:0[1-9]|1[0-2])$/),
  occurred_at: optionalMember(isoTimestamp),
  created_at: createdAtTimestamp,
});

const networkTokenNotificationSchema = notificationEnvelopeSchema(
  z.enum(NETWORK_TOKEN_EVENT_TYPES),
  jsonObjectString(networkTokenDetailsObject),
);

/**
 * True when `body` is an object whose `event` is a string starting with `network_token.`: the
 * receiver parses it with {@link parseNetworkTokenNotification} rather than as a card notification.
 */
export function isNetworkTokenNotification(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const { event } = body as Record<string, unknown>;
  return typeof event === 'string' && event.startsWith(NETWORK_TOKEN_EVENT_PREFIX);
}

/**
 * Validates a parsed webhook body as a network token notification (gap decisions, "Network token
 * notifications"; the envelope of contract §4 and the specification's "Notification body fields"
 * table, checked exactly as for card notifications) and maps it to a {@link NetworkTokenEvent}.
 * `details` is mandatory: a JSON string of `{pan_alias, state, network_token_last4, expires_at,
 * occurred_at?, created_at}`. `details.state` must be the state `event` names; that agreement is
 * checked once every member is valid on its own. Unknown members (a `card_id` included) are ignored;
 * optional members may be absent or `null`.
 * @param body the result of `JSON.parse` of the raw request body.
 * @returns `{ ok: true, event }` (a frozen object), or `{ ok: false, issues }` with one issue per bad
 *   member (at most one per path, JSON pointers reading `details` as its decoded object, e.g.
 *   `/details/pan_alias`), none carrying a submitted value.
 */
export function parseNetworkTokenNotification(body: unknown): ParseNetworkTokenNotificationResult {
  const parsed = networkTokenNotificationSchema.safeParse(body);
  if (!parsed.success) return { ok: false, issues: notificationIssues(parsed.error, body, EXPECTATIONS) };
  const n = parsed.data;
  const d = n.details;
  if (d.state !== STATE_OF_TYPE[n.event]) {
    return {
      ok: false,
      issues: [
        {
          path: toPointer(['details', 'state']),
          message: `details.state must be ${STATE_OF_TYPE[n.event]}, the state event ${n.event} reports`,
        },
      ],
    };
  }
  const event: NetworkTokenEvent = {
    id: n.id,
    type: n.event,
    tenant: n.tenant,
    panAlias: d.pan_alias,
    state: d.state,
    networkTokenLast4: d.network_token_last4,
    expiresAt: d.expires_at,
    ...(d.occurred_at !== undefined ? { occurredAt: d.occurred_at } : {}),
    createdAt: d.created_at,
    timestamp: n.timestamp,
    ...senderMembers(n),
  };
  return { ok: true, event: Object.freeze(event) };
}
