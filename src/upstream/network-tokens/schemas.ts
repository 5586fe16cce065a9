import type { z } from 'zod';
import { type holderInfo, networkTokenDocument } from '../../contracts/account-updater.ts';
import { isPanAlias } from '../../contracts/common.ts';
import { camelCaseKeys, snakeCaseKeys } from '../../lib/case.ts';
import type { BillingAddress } from '../account-updater/schemas.ts';
import { InvalidArgumentError } from '../errors.ts';

/**
 * The network tokens client's view of its contract (src/contracts/account-updater.ts, "Network
 * token"): answers parsed with the contract's schema, bare as the provider documents them or in the
 * specification's `data` envelope (sandbox contract §8), and projected into camelCase domain values;
 * the request-body builder of provisioning; and the check of a `pan_alias` before it reaches a URL
 * path.
 */

type WireHolderInfo = z.output<typeof holderInfo>;

/**
 * Cardholder details of a network token (spec "Network token", `card.holder_info`): the wire's
 * `number` is a phone number, so it is `phoneNumber` here; `billingAddress` has the v1 members.
 * Members the answer lacks (or sends as null) are absent.
 */
export interface NetworkTokenHolderInfo {
  name?: string;
  email?: string;
  phoneNumber?: string;
  billingAddress?: BillingAddress;
}

function holderInfoOf(wire: WireHolderInfo): NetworkTokenHolderInfo {
  return {
    ...(wire.name == null ? {} : { name: wire.name }),
    ...(wire.email == null ? {} : { email: wire.email }),
    ...(wire.number == null ? {} : { phoneNumber: wire.number }),
    ...(wire.billing_address == null ? {} : { billingAddress: camelCaseKeys(wire.billing_address) }),
  };
}

/**
 * A network token (spec "Network token"; docs/gap-decisions.md "Network tokens"; sandbox contract
 * §8): `panAlias` (the alias the answer names), `networkTokenLast4` and `expiresAt` (`YYYY-MM`; absent
 * until issued), `state` (absent while the specification's provisioning is pending; `ACTIVE`,
 * `SUSPENDED`, `DELETED`, or another state the provider names, kept as sent; only `ACTIVE` is
 * usable), `createdAt`/`updatedAt` (ISO 8601 UTC with milliseconds; absent when not sent) and `card`
 * (`last4`, `bin` digits, `expiresAt`, and `holderInfo` when the answer has a non-empty one). Null
 * members are absent.
 */
export const networkTokenEnvelopeSchema = networkTokenDocument.transform((token) => {
  const { holder_info: holder, ...card } = token.card;
  return {
    panAlias: token.pan_alias,
    ...(token.network_token_last4 == null ? {} : { networkTokenLast4: token.network_token_last4 }),
    ...(token.expires_at == null ? {} : { expiresAt: token.expires_at }),
    ...(token.state == null ? {} : { state: token.state }),
    ...(token.created_at == null ? {} : { createdAt: token.created_at }),
    ...(token.updated_at == null ? {} : { updatedAt: token.updated_at }),
    card: {
      last4: card.last4,
      bin: card.bin,
      expiresAt: card.expires_at,
      // An empty `holder_info` (none was given at provisioning) says nothing: left out like an absent one.
      ...(holder != null && Object.keys(holderInfoOf(holder)).length > 0
        ? { holderInfo: holderInfoOf(holder) }
        : {}),
    },
  };
});

/** A network token, see {@link networkTokenEnvelopeSchema}. */
export type NetworkToken = z.output<typeof networkTokenEnvelopeSchema>;
/** The card behind a network token. */
export type NetworkTokenCard = NetworkToken['card'];
/** Network token state (open: a state added later passes through). */
export type NetworkTokenState = NonNullable<NetworkToken['state']>;

/**
 * Input of `POST /network-tokens`: `panAlias` (an alias in a documented form; a plain card number is
 * refused before any request), `expMonth` 1-12, `expYear` as the card was stored, `holderInfo`.
 */
export interface ProvisionNetworkTokenInput {
  panAlias: string;
  expMonth: number;
  expYear: number;
  holderInfo?: NetworkTokenHolderInfo;
}

/**
 * Body of `POST /network-tokens` (spec "Endpoints"; documented provision request `pan_alias`,
 * `exp_month`, `exp_year`, `holder_info`); undefined members are omitted, the holder's phone number
 * is sent as `holder_info.number`.
 */
export function provisionBody({ holderInfo, ...input }: ProvisionNetworkTokenInput): unknown {
  if (!holderInfo) return snakeCaseKeys(input);
  const { phoneNumber, ...holder } = holderInfo;
  return snakeCaseKeys({ ...input, holderInfo: { ...holder, number: phoneNumber } });
}

/**
 * Validates a caller-supplied `pan_alias` before it becomes a path segment or a request member.
 * Paths are logged, so a plain card number passed by mistake must never reach a URL.
 * @throws InvalidArgumentError (argument `panAlias`) unless it is an alias in a documented form and a
 *   safe path segment (`isPanAlias`, src/contracts/common.ts: `tok_…`, format-preserving such as
 *   `5573495XTjZP21V7312`, or all digits such as `9914040119524512000` but not a PAN; no `/`, `?`,
 *   `#`, `%`, `..`; at most 128 characters); the message never repeats the value.
 */
export function assertPanAlias(panAlias: string): void {
  if (!isPanAlias(panAlias)) {
    throw new InvalidArgumentError(
      'panAlias',
      'expected an alias of a PAN (tok_, format-preserving or digits)',
    );
  }
}
