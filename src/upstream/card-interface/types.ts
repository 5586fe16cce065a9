/**
 * Domain types of the card interface client (spec, area `{base_url}`, media type
 * `application/vnd.api+json`). Field names are camelCase; no type here ever holds a PAN or CVC in
 * the clear: card numbers leave the client as aliases or masked to BIN and last four.
 */

/**
 * Cardholder address (spec "Card (card interface)": `address1` to `address4` and `city`; the further
 * fields the spec leaves unnamed are read as the v1 billing address members `region`, `country`,
 * `postal_code`). Every member optional.
 */
export interface CardholderAddress {
  address1?: string;
  address2?: string;
  address3?: string;
  address4?: string;
  city?: string;
  region?: string;
  country?: string;
  postalCode?: string;
}

/** Cardholder of a card (spec "Card (card interface)", `cardholder`): name, company, address. */
export interface Cardholder {
  name?: string;
  company?: string;
  address?: CardholderAddress;
}

/** `token_type` (spec "Card (card interface)"). */
export type CardTokenType = 'dpan' | 'mpan' | 'pan';

/** `wallet_type` (spec "Card (card interface)"). */
export type CardWalletType = 'apple_pay' | 'google_pay';

/**
 * Input of `POST /cards` (spec "Endpoints, Card interface"; required members per
 * docs/gap-decisions.md "Card interface": `expMonth` 1-12, `expYear` two digits, exactly one of `pan`
 * or `panAlias`). The upstream validates; its 400 names the bad member in `UpstreamError.pointer`
 * (e.g. `/data/attributes/exp_month`). `meta` is sent as `data.meta` (free-form user metadata; the
 * member `account_updater` is reserved by the service).
 */
export interface CreateCardInput {
  pan?: string;
  panAlias?: string;
  expMonth: number;
  expYear: number;
  cvc?: string;
  cvcAlias?: string;
  cvcStatus?: 'active';
  cardholder?: Cardholder;
  tokenType?: CardTokenType;
  walletType?: CardWalletType;
  meta?: Record<string, unknown>;
}

/**
 * The account updater object in a card's metadata while it is subscribed (docs/gap-decisions.md
 * "Card interface", Card record: `meta.account_updater`); removed on unsubscription (spec).
 */
export interface CardAccountUpdater {
  subscriptionId: string;
  /** `enrolled` (spec); other values passed through. */
  state: string;
}

/**
 * A card of the card interface (docs/gap-decisions.md "Card interface", Card record).
 * - `bin`: first six digits; `last4`: last four.
 * - `brand`: `visa`, `mastercard`, `amex`, `discover`, `diners`, `jcb` in the sandbox; passed through.
 * - `expYear`: two digits (spec).
 * - `createdAt`, `updatedAt`: ISO 8601 UTC with milliseconds (the upstream's zone-less microsecond
 *   form read as UTC, docs/gap-decisions.md "Common").
 * - `meta`: the user-defined `data.meta`, without `account_updater`, which is `accountUpdater`.
 */
export interface CardInterfaceCard {
  id: string;
  panAlias: string;
  cvcAlias?: string;
  bin: string;
  last4: string;
  brand: string;
  expMonth: number;
  expYear: number;
  cvcStatus?: string;
  cardholder?: Cardholder;
  tokenType?: CardTokenType;
  walletType?: CardWalletType;
  createdAt: string;
  updatedAt: string;
  meta: Record<string, unknown>;
  accountUpdater?: CardAccountUpdater;
}

/**
 * Answer of `POST /cards/{card_id}/card-update-subscriptions` (spec "Card update subscription").
 * - `id`: `CUS…`.
 * - `state`: `enrolled` (spec) or `failed` (docs/gap-decisions.md, test cards ending 4002); others
 *   passed through.
 * - timestamps as in {@link CardInterfaceCard}.
 */
export interface CardUpdateSubscription {
  id: string;
  cardId: string;
  state: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * One changed field of an on-demand check (spec "Card updates", `updated_values`). The upstream sends
 * full PANs for `pan`; the client masks them to BIN and last four (`510026******3001`) while parsing.
 */
export type CardUpdatedValue =
  | { fieldName: 'pan'; oldValue: string; newValue: string }
  | { fieldName: 'expMonth' | 'expYear'; oldValue: number; newValue: number };

/**
 * Answer of `POST /cards/{card_id}/check` (spec "Card updates"; docs/gap-decisions.md "Card
 * interface", Check).
 * - `event`: `updated`, `valid`, `closed`, `expired`, `contact_cardholder_advice`,
 *   `non_participating`; others passed through.
 * - `updatedValues`: empty unless `event` is `updated`.
 */
export interface CardUpdates {
  cardId: string;
  event: string;
  updatedValues: CardUpdatedValue[];
}
