import type { z } from 'zod';
import {
  type holderInfo,
  networkTokenDocument,
  type provisionRequest,
} from '../../contracts/account-updater.ts';
import { FORMAT_PRESERVING_ALIAS_PATTERN, TOK_ALIAS_PATTERN } from '../../contracts/common.ts';
import { type CamelCaseKeys, camelCaseKeys, snakeCaseKeys } from '../../lib/case.ts';
import { InvalidArgumentError } from '../errors.ts';

/**
 * The network tokens client's view of its contract (src/contracts/account-updater.ts, "Network
 * token"): answers parsed with the contract's schema and projected into camelCase domain values whose
 * types are derived from it, the request-body builder of provisioning, and the check of a `pan_alias`
 * before it reaches a URL path.
 */

type WireHolderInfo = z.output<typeof holderInfo>;

/**
 * Cardholder details of a network token (spec "Network token", `card.holder_info`): the wire's
 * `number` is a phone number, so it is `phoneNumber` here; `billingAddress` has the v1 members.
 */
export type NetworkTokenHolderInfo = Omit<CamelCaseKeys<WireHolderInfo>, 'number'> & { phoneNumber?: string };

function holderInfoOf({ number, ...rest }: WireHolderInfo): NetworkTokenHolderInfo {
  return { ...camelCaseKeys(rest), ...(number === undefined ? {} : { phoneNumber: number }) };
}

/**
 * A network token (spec "Network token"; docs/gap-decisions.md "Network tokens"): `panAlias`,
 * `networkTokenLast4` and `expiresAt` (`YYYY-MM`, both absent until final), `state` (absent until
 * final; `ACTIVE`, `SUSPENDED`, `DELETED` or passed through; only `ACTIVE` is usable),
 * `createdAt`/`updatedAt` (ISO 8601 UTC with milliseconds; absent in the delete answer) and `card`
 * (`last4`, `bin`, `expiresAt`, and `holderInfo` when provisioning gave one).
 */
export const networkTokenEnvelopeSchema = networkTokenDocument.transform(({ data: { card, ...token } }) => {
  const { holder_info: holder, ...cardRest } = card;
  return {
    ...camelCaseKeys(token),
    card: {
      ...camelCaseKeys(cardRest),
      // An empty `holder_info` (none was given at provisioning) says nothing: left out like an absent one.
      ...(holder !== undefined && Object.keys(holder).length > 0 ? { holderInfo: holderInfoOf(holder) } : {}),
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
 * Input of `POST /network-tokens`: `panAlias` (an alias the vault issued; a plain card number is
 * refused before any request), `expMonth` 1-12, `expYear` as the card was stored, `holderInfo`.
 */
export type ProvisionNetworkTokenInput = Omit<
  CamelCaseKeys<z.input<typeof provisionRequest>>,
  'holderInfo'
> & {
  holderInfo?: NetworkTokenHolderInfo;
};

/** Body of `POST /network-tokens` (spec "Endpoints"); undefined members are omitted. */
export function provisionBody({ holderInfo, ...input }: ProvisionNetworkTokenInput): unknown {
  if (!holderInfo) return snakeCaseKeys(input);
  const { phoneNumber, ...holder } = holderInfo;
  return snakeCaseKeys({ ...input, holderInfo: { ...holder, number: phoneNumber } });
}

/**
 * Validates a caller-supplied `pan_alias` before it becomes a path segment. Paths are logged, so a
 * plain card number passed by mistake must never reach a URL.
 * @throws InvalidArgumentError (argument `panAlias`) unless it is a `tok_` alias or a
 *   format-preserving alias (src/contracts/common.ts); the message never repeats the value.
 */
export function assertPanAlias(panAlias: string): void {
  if (
    typeof panAlias !== 'string' ||
    !(TOK_ALIAS_PATTERN.test(panAlias) || FORMAT_PRESERVING_ALIAS_PATTERN.test(panAlias))
  ) {
    throw new InvalidArgumentError('panAlias', 'expected a tok_ alias or a format-preserving alias of a PAN');
  }
}
