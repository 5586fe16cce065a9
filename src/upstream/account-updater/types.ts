/**
 * Domain types of the account updater v1 client (spec, area `{account_updater_url}`, media type
 * `application/json`). Field names are camelCase. Card numbers come back as aliases (`numberAlias`);
 * a CVV is never returned.
 */

/**
 * Billing address of a v1 card (spec "Card (account updater, version 1)", `billing_address`; all
 * members strings, all optional).
 */
export interface BillingAddress {
  name?: string;
  company?: string;
  address1?: string;
  address2?: string;
  city?: string;
  region?: string;
  country?: string;
  postalCode?: string;
  phone?: string;
}

/**
 * The `merchant` object of an enrolment or card check request (spec "Enroll request rules" 1-3):
 * `subMerchantName` is required when submitting on behalf of a merchant, `serviceMerchantId` when the
 * vault has several merchants registered (else 400 with pointer `/merchant/service_merchant_id`,
 * docs/gap-decisions.md "Account updater v1", Merchants).
 */
export interface MerchantInput {
  serviceMerchantId?: string;
  subMerchantName?: string;
}

/** Merchant echoed by the upstream (spec "Merchant object (version 1)"). */
export interface Merchant {
  serviceMerchantId?: string;
  subMerchantName?: string;
  subMerchantMid?: number;
}

/**
 * Input of v1 `POST /cards` (spec "Endpoints, Account updater"): `number` is an alias of the PAN
 * (`tok_…` or format-preserving) or, in the sandbox only, a plain PAN (docs/gap-decisions.md); it is
 * sent in the body only. `expYear` two digits as in the spec's examples.
 */
export interface EnrollCardInput {
  name: string;
  number: string;
  expMonth: number;
  expYear: number;
  billingAddress?: BillingAddress;
  merchant?: MerchantInput;
}

/**
 * A v1 card (spec "Card (account updater, version 1)"; docs/gap-decisions.md "Account updater v1").
 * - `id`: `CRD` + 22 Base62 characters.
 * - `numberAlias`: the upstream `number`, an alias (a plain card number would be masked to BIN and
 *   last four).
 * - `state`: `enrolling` or `enrolled` (lower-cased; other values passed through).
 * - `event`: latest network event, e.g. `au_card.enrolled`, `au_card.updated`; `au_card.enrolling` while enrolling (docs/gap-decisions.md); absent from an upstream that omits it.
 * - `capabilities`: `["ACCOUNT_UPDATER"]` once enrolled, `[]` while enrolling.
 * - `createdAt`, `updatedAt`: ISO 8601 UTC with milliseconds.
 */
export interface AccountUpdaterCard {
  id: string;
  name: string;
  numberAlias: string;
  expMonth: number;
  expYear: number;
  billingAddress?: BillingAddress;
  merchant?: Merchant;
  capabilities: string[];
  state: string;
  event?: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * Input of v1 `POST /card-check` (spec "Card check request and result"): `number` an alias or a plain
 * PAN of the six named families (body only); `cvv` `^\d{3,4}$`, optional; `merchant` as for enrolment.
 */
export interface CardCheckInput {
  name: string;
  number: string;
  expMonth: number;
  expYear: number;
  cvv?: string;
  merchant?: MerchantInput;
}

/**
 * Result of v1 `POST /card-check` (spec "Card check request and result"; docs/gap-decisions.md
 * "Account updater v1", Card-check result).
 * - `numberAlias`: alias of the (new, when it changed) number.
 * - `event`: `au_card.valid`, `au_card.updated`, `au_card.closed`, `au_card.expired`,
 *   `au_card.contact_cardholder_advice`, `au_card.non_participating`, …
 * - `failureCode`: e.g. `account-updater-not-supported`; absent on success.
 * - `name`: the request's name, echoed (absent when the upstream leaves it out).
 * The CVV is never part of the result.
 */
export interface CardCheckResult {
  name?: string;
  numberAlias: string;
  expMonth: number;
  expYear: number;
  merchant?: Merchant;
  failureCode?: string;
  event: string;
}
