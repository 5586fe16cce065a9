import { z } from 'zod';
import { CARD_EVENT_KINDS, type CardEventKind } from './account-updater.ts';
import {
  BIN_PATTERN,
  cardId,
  cvc,
  expMonth,
  isoTimestamp,
  LAST4_PATTERN,
  openEnum,
  PAN_PATTERN,
  tokAlias,
  twoDigitYear,
} from './common.ts';

/**
 * The card interface area (`{base_url}`, `application/vnd.api+json`) written once: the JSON:API
 * documents of spec "Card (card interface)", "Card update subscription", "Card updates" and the
 * endpoints table, with the gaps filled by docs/gap-decisions.md "Card interface". The upstream
 * client (src/upstream/card-interface) parses answers with these schemas and derives its domain types
 * from them; the sandbox (src/sandbox/card-interface.ts) validates requests with them and types its
 * answers with `z.input`; the GraphQL input validation (src/schema/card.ts) reuses the limits.
 */

/** Media type of the area (spec, area table). */
export const CARD_INTERFACE_MEDIA_TYPE = 'application/vnd.api+json';

/** `token_type` (spec "Card (card interface)": allowed values). */
export const TOKEN_TYPES = ['dpan', 'mpan', 'pan'] as const;
/** `wallet_type` (spec "Card (card interface)": allowed values). */
export const WALLET_TYPES = ['apple_pay', 'google_pay'] as const;
/** `cvc_status`: the one value the spec gives; others are refused (docs/gap-decisions.md). */
export const CVC_STATUSES = ['active'] as const;
/** `brand` of a card record (docs/gap-decisions.md "Card record"); others pass through when read. */
export const CARD_BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb'] as const;
/** Subscription `state`: `enrolled` (spec), `failed` (docs/gap-decisions.md, test cards 4002). */
export const SUBSCRIPTION_STATES = ['enrolled', 'failed'] as const;
/** Event kinds only a notification reports, never an on-demand check. */
const NOTIFICATION_ONLY_KINDS = ['unknown', 'enrolled', 'opt_out'] as const;
/** A check `event` value: a card event kind that is not notification-only. */
export type CheckEvent = Exclude<CardEventKind, (typeof NOTIFICATION_ONLY_KINDS)[number]>;
/**
 * Check `event` values (spec: `updated`; docs/gap-decisions.md "Check: event values"): the card event
 * kinds (src/contracts/account-updater.ts) but the notification-only ones, so `updated`, `expired`,
 * `closed`, `contact_cardholder_advice`, `non_participating` and `valid`.
 */
export const CHECK_EVENTS = CARD_EVENT_KINDS.filter(
  (kind): kind is CheckEvent => !(NOTIFICATION_ONLY_KINDS as readonly string[]).includes(kind),
) as [CheckEvent, ...CheckEvent[]];
/** `first8` of the documented create answer: the first eight digits of the PAN. */
export const FIRST8_PATTERN = /^\d{8}$/;
/**
 * Subscription id: `CUS` + 1 to 64 letters or digits (spec: prefix `CUS`; the documented example and
 * the sandbox: `CUS` + 22; docs/gap-decisions.md), read as tolerantly as card ids.
 */
export const SUBSCRIPTION_ID_PATTERN = /^CUS[A-Za-z0-9]{1,64}$/;
/** Member of `data.meta` the service owns while a card is subscribed (spec: removed on unsubscription). */
export const ACCOUNT_UPDATER_META = 'account_updater';

/**
 * `cardholder.address` (spec: `address1`-`address4`, `city` strings, "plus further fields"): further
 * members are kept when their value is a string, number, boolean or null (docs/gap-decisions.md
 * "Cardholder address members").
 */
export const cardholderAddress = z
  .object({
    address1: z.string().optional(),
    address2: z.string().optional(),
    address3: z.string().optional(),
    address4: z.string().optional(),
    city: z.string().optional(),
  })
  .catchall(z.union([z.string(), z.number(), z.boolean(), z.null()]));

/** `cardholder` (spec: `name`, `company`, `address`); unknown members are dropped. */
export const cardholder = z.object({
  name: z.string().optional(),
  company: z.string().optional(),
  address: cardholderAddress.optional(),
});

/**
 * The optional attributes of `POST /cards` that the card record echoes as sent (spec "Card (card
 * interface)"): written here once, spread into both {@link createCardAttributes} and
 * {@link cardRecordAttributes}; the sandbox stores and answers them without naming them. A new
 * optional card attribute goes here (and into the GraphQL type).
 */
export const echoedCardAttributes = z.object({
  cvc_status: z.enum(CVC_STATUSES).optional(),
  cardholder: cardholder.optional(),
  token_type: z.enum(TOKEN_TYPES).optional(),
  wallet_type: z.enum(WALLET_TYPES).optional(),
});

/**
 * `data.attributes` of `POST /cards` (spec "Card (card interface)"; required members per
 * docs/gap-decisions.md: `exp_month`, `exp_year` and at least one of `pan`/`pan_alias`, checked by the
 * service since it needs the vault). Never echoed: it holds the PAN and CVC.
 */
export const createCardAttributes = z.object({
  pan: z.string().regex(PAN_PATTERN, 'must be 13 to 19 digits').optional(),
  pan_alias: z.string().min(1).optional(),
  cvc: cvc.optional(),
  cvc_alias: z.string().min(1).optional(),
  exp_month: expMonth,
  exp_year: twoDigitYear,
  ...echoedCardAttributes.shape,
});

/**
 * Body of `POST /cards` (spec: `data.attributes` and an optional free-form `data.meta`; a JSON:API
 * `data.type`, when sent, names the resource).
 */
export const createCardRequest = z.object({
  data: z.object({
    type: z.literal('cards').optional(),
    attributes: createCardAttributes,
    meta: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** `data.meta.account_updater` while the card is subscribed (docs/gap-decisions.md "Card record"). */
export const accountUpdaterMeta = z.object({
  subscription_id: z.string().regex(SUBSCRIPTION_ID_PATTERN),
  state: openEnum(['enrolled']),
});

/**
 * The card record (`POST /cards` 201, `GET /cards/{card_id}` 200; docs/gap-decisions.md "Card
 * record"), read tolerantly: the documented create answer (sandbox contract §8, provider-docs
 * `examples.json`) carries `pan`, `cvc`, `first8` and omits `brand` and the timestamps, the
 * specification's reading carries `brand` and the timestamps and never `pan` nor `cvc`. `pan` and
 * `cvc` are read only to be dropped by the upstream client; unknown members are ignored. `meta` is the
 * submitted metadata plus `account_updater` while subscribed.
 */
export const cardRecordAttributes = z.object({
  // The documented 201 echoes the card data (scope `cards:read-pci`); no reader keeps it.
  pan: z.string().optional(),
  cvc: z.string().optional(),
  pan_alias: tokAlias,
  cvc_alias: tokAlias.optional(),
  bin: z.string().regex(BIN_PATTERN),
  first8: z.string().regex(FIRST8_PATTERN).optional(),
  last4: z.string().regex(LAST4_PATTERN),
  brand: openEnum(CARD_BRANDS).optional(),
  // The stored copy of the documented 201 ends before them; the create reader takes the request's.
  exp_month: expMonth.optional(),
  exp_year: twoDigitYear.optional(),
  ...echoedCardAttributes.shape,
  // A value the provider adds later must not fail the read (open enumeration).
  cvc_status: openEnum(CVC_STATUSES).optional(),
  created_at: isoTimestamp.optional(),
  updated_at: isoTimestamp.optional(),
});

/** The card record document, see {@link cardRecordAttributes}. */
export const cardRecord = z.object({
  data: z.object({
    type: z.literal('cards'),
    id: cardId,
    attributes: cardRecordAttributes,
    meta: z
      .object({ [ACCOUNT_UPDATER_META]: accountUpdaterMeta.optional() })
      .catchall(z.unknown())
      .optional(),
  }),
});

/**
 * Body of a `POST /cards` 303 (Duplicate Card Check, sandbox contract §8: "303 with the existing
 * card's id"): the existing card's id in `data.id`, also named by the `Location` header
 * (`…/cards/{card_id}`). The provider shows neither body nor header, so the reader takes either.
 */
export const duplicateCardDocument = z.object({
  data: z.object({ type: z.literal('cards').optional(), id: cardId }),
});

/** `POST /cards/{card_id}/card-update-subscriptions` 200 (spec "Card update subscription"). */
export const subscriptionDocument = z.object({
  data: z.object({
    type: z.literal('card_update_subscriptions'),
    id: z.string().regex(SUBSCRIPTION_ID_PATTERN),
    attributes: z.object({
      created_at: isoTimestamp,
      state: openEnum(SUBSCRIPTION_STATES),
      updated_at: isoTimestamp,
    }),
  }),
});

/**
 * An `old_value`/`new_value` of a check: a JSON number (spec), full PANs included. The client reads
 * these numbers as their source text (a 19-digit PAN does not survive a double), so digit strings are
 * the same value.
 */
export const checkValue = z.union([z.number().min(0), z.string().regex(/^\d{1,19}$/)]);

/** One item of `updated_values` (spec "Card updates": `field_name` `pan`, `exp_month`, `exp_year`). */
export const updatedValue = z.object({
  field_name: z.enum(['pan', 'exp_month', 'exp_year']),
  old_value: checkValue,
  new_value: checkValue,
});

/** `POST /cards/{card_id}/check` 200 (spec "Card updates"; `data.id` is the card id, gap decisions). */
export const checkDocument = z.object({
  data: z.object({
    type: z.literal('card_updates'),
    id: cardId.optional(),
    attributes: z.object({
      event: openEnum(CHECK_EVENTS),
      updated_values: z.array(updatedValue).default([]),
    }),
  }),
});
