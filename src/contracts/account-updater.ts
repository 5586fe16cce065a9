import { z } from 'zod';
import {
  BIN_PATTERN,
  billingAddress,
  cardId,
  cvc,
  expMonth,
  isoTimestamp,
  LAST4_PATTERN,
  openEnum,
  yearMonth,
} from './common.ts';

/**
 * The account updater area, version 1, and network tokens (both `{account_updater_url}`,
 * `application/json`) written once: spec "Card (account updater, version 1)", "Card check request and
 * result", "Merchant object", "Network token", their endpoints, states and errors, gaps per
 * docs/gap-decisions.md "Account updater v1" and "Network tokens". Imported by the upstream clients
 * (src/upstream/account-updater, src/upstream/network-tokens), the sandbox
 * (src/sandbox/account-updater.ts, network-tokens.ts) and the GraphQL input validation.
 */

/** Media type of the area (spec, area table). */
export const ACCOUNT_UPDATER_MEDIA_TYPE = 'application/json';

/** v1 card states (spec: `enrolling`, `enrolled`; lower case on the wire per docs/gap-decisions.md). */
export const ENROLMENT_STATES = ['enrolling', 'enrolled'] as const;

/**
 * Card lifecycle event kinds (spec "Events": event kinds), as the card interface's check `event`
 * names them; the account updater's wire value is `au_card.<kind>` ({@link CARD_EVENTS}).
 */
export const CARD_EVENT_KINDS = [
  'updated',
  'expired',
  'closed',
  'contact_cardholder_advice',
  'non_participating',
  'unknown',
  'enrolled',
  'opt_out',
  'valid',
] as const;

/** One of {@link CARD_EVENT_KINDS}. */
export type CardEventKind = (typeof CARD_EVENT_KINDS)[number];

/** A card lifecycle event on the account updater's wire: `au_card.<kind>`. */
export type CardEvent = `au_card.${CardEventKind}`;

/** Card lifecycle events on the account updater's wire, one per {@link CARD_EVENT_KINDS}, in its order. */
export const CARD_EVENTS = CARD_EVENT_KINDS.map((kind): CardEvent => `au_card.${kind}`) as [
  CardEvent,
  ...CardEvent[],
];

/**
 * `event` of a card whose enrolment has not completed: spec "Enroll request rules" 5, the synchronous
 * answer reports the state and the latest event type (docs/gap-decisions.md "Account updater v1").
 */
export const ENROLLING_EVENT = 'au_card.enrolling';

/** `capabilities` value of an enrolled card (spec). */
export const ACCOUNT_UPDATER_CAPABILITY = 'ACCOUNT_UPDATER';

/** v1 `exp_year`: the spec's examples use two digits; 0-9999 accepted and echoed (docs/gap-decisions.md). */
export const v1ExpYear = z.int().min(0).max(9999);

/** `merchant` of an enrolment or card check request (spec "Enroll request rules" 1-3). */
export const merchantRequest = z.object({
  service_merchant_id: z.string().min(1).optional(),
  sub_merchant_name: z.string().min(1).optional(),
});

/** `merchant` of v1 answers (spec "Merchant object (version 1)"). */
export const merchant = z.object({
  service_merchant_id: z.string().optional(),
  sub_merchant_name: z.string().optional(),
  sub_merchant_mid: z.number().optional(),
});

/** Members of v1 enrolment and card check requests alike: the card's `number` and expiry. */
const v1CardMembers = {
  number: z.string().min(1),
  exp_month: expMonth,
  exp_year: v1ExpYear,
};

/**
 * Body of v1 `POST /cards` (spec: `name`, `number` (an alias of the PAN; in the sandbox also a plain
 * PAN), `exp_month`, `exp_year` required; `billing_address`, `merchant` optional).
 */
export const enrolRequest = z.object({
  name: z.string().min(1),
  ...v1CardMembers,
  billing_address: billingAddress.optional(),
  merchant: merchantRequest.optional(),
});

/** Body of `POST /card-check` (spec "Card check request"; `name`, `cvv`, `merchant` optional). */
export const cardCheckRequest = z.object({
  name: z.string().min(1).optional(),
  ...v1CardMembers,
  cvv: cvc.optional(),
  merchant: merchantRequest.optional(),
});

/**
 * A v1 card (spec "Card (account updater, version 1)"): `number` is an alias, never a PAN; `state`
 * read in lower case; `capabilities` `["ACCOUNT_UPDATER"]` once enrolled, `[]` while enrolling.
 */
export const v1Card = z.object({
  id: cardId,
  name: z.string(),
  number: z.string().min(1),
  exp_month: expMonth,
  exp_year: v1ExpYear,
  billing_address: billingAddress.optional(),
  merchant: merchant.optional(),
  capabilities: z.array(openEnum([ACCOUNT_UPDATER_CAPABILITY])).default([]),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
  state: openEnum(ENROLMENT_STATES).transform((state) => state.toLowerCase()),
  event: openEnum([...CARD_EVENTS, ENROLLING_EVENT]).optional(),
});

/** Answer of enrolment (201) and of `GET /cards/{card_id}` (200): `{"data": <v1 card>}`. */
export const v1CardDocument = z.object({ data: v1Card });

/** Answer of `POST /card-check` (200; spec "Card check request and result"; `cvv` is never echoed). */
export const cardCheckDocument = z.object({
  data: z.object({
    name: z.string().optional(),
    number: z.string().min(1),
    exp_month: expMonth,
    exp_year: v1ExpYear,
    merchant: merchant.optional(),
    failure_code: z.string().min(1).optional(),
    event: openEnum(CARD_EVENTS),
  }),
});

/**
 * Network token states: `ACTIVE`, `DELETED` (spec), `SUSPENDED` (contract §5.5); no `state` while
 * provisioning is pending (docs/gap-decisions.md "Network tokens").
 */
export const NETWORK_TOKEN_STATES = ['ACTIVE', 'SUSPENDED', 'DELETED'] as const;

/** Most digits of a holder phone number (E.164). */
export const PHONE_NUMBER_MAX_DIGITS = 15;

/** `card.holder_info` (spec "Network token"): `number` is a phone number, not a card number. */
export const holderInfo = z.object({
  name: z.string().optional(),
  email: z.string().optional(),
  number: z.string().optional(),
  billing_address: billingAddress.optional(),
});

/** Body of `POST /network-tokens` (spec; required members per docs/gap-decisions.md). */
export const provisionRequest = z.object({
  pan_alias: z.string(),
  exp_month: z.int(),
  exp_year: z.int(),
  holder_info: holderInfo.optional(),
});

/**
 * A network token (spec "Network token"). Only `pan_alias` and `card` are always present: the
 * provision answer has no final state yet, the delete answer carries `card.last4`, `card.bin` and
 * `card.expires_at` only.
 */
export const networkToken = z.object({
  pan_alias: z.string().min(1),
  network_token_last4: z.string().regex(LAST4_PATTERN).optional(),
  expires_at: yearMonth.optional(),
  state: openEnum(NETWORK_TOKEN_STATES).optional(),
  created_at: isoTimestamp.optional(),
  updated_at: isoTimestamp.optional(),
  card: z.object({
    last4: z.string().regex(LAST4_PATTERN),
    bin: z.string().regex(BIN_PATTERN),
    expires_at: yearMonth,
    holder_info: holderInfo.optional(),
  }),
});

/** The answer of every network token endpoint: `{"data": <network token>}`. */
export const networkTokenDocument = z.object({ data: networkToken });
