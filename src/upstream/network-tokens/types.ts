import type { BillingAddress } from '../account-updater/types.ts';

/**
 * Domain types of the network tokens client (spec "Network token", area `{account_updater_url}`,
 * media type `application/json`). Field names are camelCase. No type here holds a PAN: the card is
 * named by its alias, its BIN and its last four digits.
 */

/**
 * Network token states: `ACTIVE` and `DELETED` (spec "States and transitions, Network token"),
 * `SUSPENDED` (contract §5, cards ending 5002). A state the upstream adds later is passed through as
 * a string rather than failing the answer.
 */
export type NetworkTokenState = 'ACTIVE' | 'SUSPENDED' | 'DELETED' | (string & {});

/**
 * Cardholder details of a network token (spec "Network token", `card.holder_info`): `phoneNumber` is
 * the wire's `number` (a phone number, not a card number); `billingAddress` has the v1 billing address
 * members. Every member optional.
 */
export interface NetworkTokenHolderInfo {
  name?: string;
  email?: string;
  phoneNumber?: string;
  billingAddress?: BillingAddress;
}

/**
 * The card behind a network token (spec "Network token", `card`).
 * - `bin`: first six digits of the PAN (digits, as a string); `last4`: its last four digits.
 * - `expiresAt`: card expiry, `YYYY-MM`.
 * - `holderInfo`: the cardholder details given at provisioning, in provision and retrieve answers;
 *   absent in the delete answer and when none were given.
 */
export interface NetworkTokenCard {
  last4: string;
  bin: string;
  expiresAt: string;
  holderInfo?: NetworkTokenHolderInfo;
}

/**
 * A network token (spec "Network token"; docs/gap-decisions.md "Network tokens").
 * - `panAlias`: the alias of the PAN the token stands for (also its identifier in paths).
 * - `networkTokenLast4`: last four digits of the token; `expiresAt`: token expiry, `YYYY-MM`. Both
 *   absent while provisioning has not reached a final state.
 * - `state`: absent until final (the provision answer never carries it, spec); then `ACTIVE`,
 *   `SUSPENDED`, `DELETED` or a value passed through. Only an `ACTIVE` token can be used in a
 *   transaction.
 * - `createdAt`, `updatedAt`: ISO 8601 UTC with milliseconds (`YYYY-MM-DDTHH:mm:ss.sssZ`); absent in
 *   the delete answer.
 */
export interface NetworkToken {
  panAlias: string;
  networkTokenLast4?: string;
  expiresAt?: string;
  state?: NetworkTokenState;
  createdAt?: string;
  updatedAt?: string;
  card: NetworkTokenCard;
}

/**
 * Input of `POST /network-tokens` (spec "Endpoints, Account updater and network tokens").
 * - `panAlias`: an alias the vault issued for the PAN (`tok_…` or format-preserving); a plain card
 *   number is refused by the client before any request.
 * - `expMonth`: 1-12; `expYear`: as the card was stored (two digits in the spec's examples).
 * - `holderInfo`: optional cardholder details, sent as `holder_info`.
 */
export interface ProvisionNetworkTokenInput {
  panAlias: string;
  expMonth: number;
  expYear: number;
  holderInfo?: NetworkTokenHolderInfo;
}
