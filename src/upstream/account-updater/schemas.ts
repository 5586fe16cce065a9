import type { z } from 'zod';
import type { merchantRequest } from '../../contracts/account-updater.ts';
import {
  cardCheckDocument,
  type cardCheckRequest,
  type enrolRequest,
  v1CardDocument,
} from '../../contracts/account-updater.ts';
import type { billingAddress } from '../../contracts/common.ts';
import { type CamelCaseKeys, camelCaseKeys, snakeCaseKeys } from '../../lib/case.ts';
import { maskPan } from '../../lib/pan.ts';

/**
 * The account updater v1 client's view of its contract (src/contracts/account-updater.ts): answers
 * parsed with the contract's schemas and projected into camelCase domain values whose types are
 * derived from the contract. `number` becomes `numberAlias`: the specification calls it an alias; a
 * plain card number an upstream sent instead is masked to BIN and last four here.
 */

/** A value the specification calls an alias of a PAN: 12 to 19 digits are a PAN and get masked. */
const aliasOrMaskedPan = (value: string) => (/^\d{12,19}$/.test(value) ? maskPan(value) : value);

/**
 * A v1 card (spec "Card (account updater, version 1)"; docs/gap-decisions.md "Account updater v1"):
 * `id` (`CRD` + 22 Base62), `name`, `numberAlias`, `expMonth`, `expYear`, `billingAddress`,
 * `merchant`, `capabilities`, `state` (`enrolling`, `enrolled`; others passed through), `event`
 * (latest network event; `au_card.enrolling` while enrolling), `createdAt`/`updatedAt` (ISO 8601 UTC
 * with milliseconds).
 */
export const cardEnvelopeSchema = v1CardDocument.transform(({ data: { number, ...card } }) => ({
  ...camelCaseKeys(card),
  numberAlias: aliasOrMaskedPan(number),
}));

/** A v1 card, see {@link cardEnvelopeSchema}. */
export type AccountUpdaterCard = z.output<typeof cardEnvelopeSchema>;
/** Billing address of a v1 card (also network token `holder_info.billing_address`). */
export type BillingAddress = CamelCaseKeys<z.output<typeof billingAddress>>;
/** Merchant echoed by the upstream (spec "Merchant object (version 1)"). */
export type Merchant = NonNullable<AccountUpdaterCard['merchant']>;
/** `merchant` of a request (spec "Enroll request rules" 1-3). */
export type MerchantInput = CamelCaseKeys<z.input<typeof merchantRequest>>;

/**
 * Result of `POST /card-check` (docs/gap-decisions.md "Account updater v1", Card-check result):
 * `numberAlias` (of the new number when it changed), `expMonth`, `expYear`, `merchant`, `failureCode`
 * (absent on success), `event` (`au_card.valid`, `au_card.updated`, …), `name` when echoed. The CVV is
 * never part of it.
 */
export const cardCheckEnvelopeSchema = cardCheckDocument.transform(({ data: { number, ...result } }) => ({
  ...camelCaseKeys(result),
  numberAlias: aliasOrMaskedPan(number),
}));

/** Result of a card check, see {@link cardCheckEnvelopeSchema}. */
export type CardCheckResult = z.output<typeof cardCheckEnvelopeSchema>;

/**
 * Input of v1 `POST /cards`: the contract's request camelCased. `number` is an alias of the PAN
 * (`tok_…` or format-preserving) or, in the sandbox only, a plain PAN; it travels in the body only.
 */
export type EnrollCardInput = CamelCaseKeys<z.input<typeof enrolRequest>>;

/** Input of `POST /card-check`: the contract's request camelCased (`cvv` `^\d{3,4}$`, optional). */
export type CardCheckInput = CamelCaseKeys<z.input<typeof cardCheckRequest>>;

/** Body of v1 `POST /cards` (spec "Endpoints, Account updater"); undefined members are omitted. */
export function enrollCardBody(input: EnrollCardInput): unknown {
  return snakeCaseKeys(input);
}

/** Body of v1 `POST /card-check` (spec "Card check request and result"); undefined members are omitted. */
export function cardCheckBody(input: CardCheckInput): unknown {
  return snakeCaseKeys(input);
}
