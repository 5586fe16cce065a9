import { z } from 'zod';
import {
  BIN_PATTERN,
  billingAddress,
  billingAddressAnswer,
  CVC_PATTERN,
  cardId,
  cvc,
  expMonth,
  FORMAT_PRESERVING_ALIAS_PATTERN,
  isoTimestamp,
  LAST4_PATTERN,
  openEnum,
  twoDigitYear,
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

/**
 * `merchant` of an enrolment or card check request as the sandbox reads it (spec "Enroll request
 * rules" 1-3): the merchant id under its documented name `vgs_merchant_id` (sandbox contract §8) or
 * the specification's `service_merchant_id`, read as the same thing ({@link merchantIdOf}). The
 * gateway sends `vgs_merchant_id` only ({@link documentedMerchantRequest}).
 */
export const merchantRequest = z.object({
  vgs_merchant_id: z.string().min(1).optional(),
  service_merchant_id: z.string().min(1).optional(),
  sub_merchant_name: z.string().min(1).optional(),
});

/**
 * `merchant` of a request as the provider documents it (enroll-card page; sandbox contract §8):
 * `vgs_merchant_id` and `sub_merchant_name`, nothing else. What the gateway writes.
 */
export const documentedMerchantRequest = z.strictObject({
  vgs_merchant_id: z.string().min(1).optional(),
  sub_merchant_name: z.string().min(1).optional(),
});

/**
 * `sub_merchant_mid`: a JSON number in the documentation and the specification; a digit string is
 * read as the same number.
 */
const subMerchantMid = z.union([
  z.number().int().min(0),
  z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number),
]);

/**
 * `merchant` of v1 answers (spec "Merchant object (version 1)"; sandbox contract §8): the merchant id
 * as `vgs_merchant_id` (documented) or `service_merchant_id` (specification), read as the same
 * thing ({@link merchantIdOf}); `sub_merchant_name`; `sub_merchant_mid` a number. Every member may be
 * absent or null.
 */
export const merchant = z.object({
  vgs_merchant_id: z.string().nullish(),
  service_merchant_id: z.string().nullish(),
  sub_merchant_name: z.string().nullish(),
  sub_merchant_mid: subMerchantMid.nullish(),
});

/**
 * The merchant id of a request or answer `merchant`: `vgs_merchant_id` (the documented name, sandbox
 * contract §8) or else the specification's `service_merchant_id`; undefined when neither is given.
 */
export function merchantIdOf(value: {
  vgs_merchant_id?: string | null | undefined;
  service_merchant_id?: string | null | undefined;
}): string | undefined {
  return value.vgs_merchant_id ?? value.service_merchant_id ?? undefined;
}

/**
 * `{"data": X}` or `X` alone, read as `X`: the account updater documents its v1 answers wrapped in
 * `data` and its network token answers not (sandbox contract §8), the specification wraps both, so
 * the reader takes either and the domain never sees the envelope.
 */
export function enveloped<T extends z.ZodType>(schema: T) {
  return z.union([
    z.object({ data: schema }).transform((document) => (document as { data: z.output<T> }).data),
    schema,
  ]);
}

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

/** Body of `POST /card-check` as the sandbox reads it (spec "Card check request"; `name`, `cvv`, `merchant` optional). */
export const cardCheckRequest = z.object({
  name: z.string().min(1).optional(),
  ...v1CardMembers,
  cvv: cvc.optional(),
  merchant: merchantRequest.optional(),
});

/** Most characters of a card check `name` (documented card-check request, sandbox contract §8). */
export const CARD_CHECK_NAME_MAX_LENGTH = 255;

/**
 * A card check `number` the provider accepts (documented card-check request, sandbox contract §8):
 * 13 to 19 characters, a plain PAN (digits) or a format-preserving alias; never a `tok_` alias.
 */
export function isCardCheckNumber(value: string): boolean {
  return (
    value.length >= 13 &&
    value.length <= 19 &&
    (/^\d+$/.test(value) || FORMAT_PRESERVING_ALIAS_PATTERN.test(value))
  );
}

/**
 * Body of `POST /card-check` as the provider documents it, what the gateway writes (sandbox contract
 * §8): `name` 1-255 characters, `number` per {@link isCardCheckNumber}, `exp_month` 1-12, `exp_year`
 * two digits (0-99), `cvv` `^\d{3,4}$`, `merchant` as {@link documentedMerchantRequest}; no other member.
 */
export const documentedCardCheckRequest = z.strictObject({
  name: z.string().min(1).max(CARD_CHECK_NAME_MAX_LENGTH).optional(),
  number: z
    .string()
    .refine(isCardCheckNumber, 'must be 13 to 19 characters: a PAN or a format-preserving alias'),
  exp_month: expMonth,
  exp_year: twoDigitYear,
  cvv: z.string().regex(CVC_PATTERN).optional(),
  merchant: documentedMerchantRequest.optional(),
});

/**
 * Body of v1 `POST /cards` as the gateway writes it: the {@link enrolRequest} members with the
 * documented merchant ({@link documentedMerchantRequest}); no other member.
 */
export const documentedEnrolRequest = z.strictObject({
  ...enrolRequest.shape,
  billing_address: billingAddress.strict().optional(),
  merchant: documentedMerchantRequest.optional(),
});

/**
 * A card number in a v1 answer: a string (an alias, per the specification) or a JSON number (the
 * plain PAN the documented card check answers; sandbox contract §8). The client reads such numbers
 * as their source text and masks them; they never leave it.
 */
// Not `.int()`: zod's integers stop at 2^53, and a 19-digit PAN read without its source text is a larger double.
const v1Number = z.union([z.string().min(1), z.number().min(0)]);

/**
 * A v1 card (spec "Card (account updater, version 1)"; the documented enrol and get-card answers,
 * sandbox contract §8): `number` is an alias (a JSON number would be a PAN: masked by the client);
 * `state` read in lower case; `capabilities` `["ACCOUNT_UPDATER"]` once enrolled, `[]` while
 * enrolling. Members the documentation does not always show (`name`, `billing_address`, `merchant`,
 * `capabilities`, `event`) may be absent; unknown members are ignored.
 */
export const v1Card = z.object({
  id: cardId,
  name: z.string().nullish(),
  number: v1Number,
  exp_month: expMonth,
  exp_year: v1ExpYear,
  billing_address: billingAddressAnswer.nullish(),
  merchant: merchant.nullish(),
  capabilities: z.array(openEnum([ACCOUNT_UPDATER_CAPABILITY])).default([]),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
  state: openEnum(ENROLMENT_STATES).transform((state) => state.toLowerCase()),
  event: openEnum([...CARD_EVENTS, ENROLLING_EVENT]).nullish(),
});

/**
 * Answer of enrolment (documented 202, specification reading 201) and of `GET /cards/{card_id}`
 * (200): `{"data": <v1 card>}`, or the card alone (read alike, {@link enveloped}).
 */
export const v1CardDocument = enveloped(v1Card);

/**
 * The result of `POST /card-check` (spec "Card check request and result"; documented card-check
 * answer, sandbox contract §8): `number` a string (an alias, specification) or a JSON number (the
 * plain PAN, documented); `cvv` a string or a JSON number (documented), which the client drops;
 * `merchant` as {@link merchant}; `failure_code` and `name` may be absent or null.
 */
export const cardCheckResult = z.object({
  name: z.string().nullish(),
  number: v1Number,
  exp_month: expMonth,
  exp_year: v1ExpYear,
  cvv: z.union([z.string(), z.number().min(0)]).nullish(),
  merchant: merchant.nullish(),
  failure_code: z.string().nullish(),
  event: openEnum(CARD_EVENTS),
});

/** Answer of `POST /card-check` (documented 202, specification reading 200): `{"data": …}` or bare. */
export const cardCheckDocument = enveloped(cardCheckResult);

/**
 * Network token states: `ACTIVE`, `DELETED` (spec), `SUSPENDED` (contract §5.5); no `state` while
 * provisioning is pending (docs/gap-decisions.md "Network tokens").
 */
export const NETWORK_TOKEN_STATES = ['ACTIVE', 'SUSPENDED', 'DELETED'] as const;

/** Most digits of a holder phone number (E.164). */
export const PHONE_NUMBER_MAX_DIGITS = 15;

/** `card.holder_info` (spec "Network token"): `number` is a phone number, not a card number. */
export const holderInfo = z.object({
  name: z.string().nullish(),
  email: z.string().nullish(),
  number: z.string().nullish(),
  billing_address: billingAddressAnswer.nullish(),
});

/** Body of `POST /network-tokens` (spec; required members per docs/gap-decisions.md). */
export const provisionRequest = z.object({
  pan_alias: z.string(),
  exp_month: z.int(),
  exp_year: z.int(),
  holder_info: holderInfo.optional(),
});

/** A network token card `bin`: digits as a string (spec), or a JSON number read as its digits. */
const tokenCardBin = z.union([
  z.string().regex(BIN_PATTERN),
  z
    .number()
    .int()
    .min(100_000)
    .max(99_999_999)
    .transform((bin) => String(bin)),
]);

/**
 * A network token (spec "Network token"; documented provision, get and delete answers, sandbox
 * contract §8). Only `pan_alias` and `card` are always present: the specification's provision answer
 * has no final state yet, the delete answer carries `card.last4`, `card.bin` and `card.expires_at`
 * only. `state` is an open enumeration (a state the provider adds is kept); unknown members are
 * ignored.
 */
export const networkToken = z.object({
  pan_alias: z.string().min(1),
  network_token_last4: z.string().regex(LAST4_PATTERN).nullish(),
  expires_at: yearMonth.nullish(),
  state: openEnum(NETWORK_TOKEN_STATES).nullish(),
  created_at: isoTimestamp.nullish(),
  updated_at: isoTimestamp.nullish(),
  card: z.object({
    last4: z.string().regex(LAST4_PATTERN),
    bin: tokenCardBin,
    expires_at: yearMonth,
    holder_info: holderInfo.nullish(),
  }),
});

/**
 * The answer of every network token endpoint: the token alone (documented, sandbox contract §8) or
 * `{"data": <network token>}` (specification reading); read alike ({@link enveloped}).
 */
export const networkTokenDocument = enveloped(networkToken);

/** The delete answer: a {@link networkToken} in state `DELETED`, bare or in `data`. */
export const deletedNetworkTokenDocument = enveloped(networkToken.extend({ state: z.literal('DELETED') }));
