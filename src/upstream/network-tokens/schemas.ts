import { z } from 'zod';
import { billingAddressBody, billingAddressWire } from '../account-updater/schemas.ts';
import { InvalidArgumentError } from '../errors.ts';
import { isoTimestamp, openEnum, withoutUndefined } from '../wire.ts';
import type {
  NetworkToken,
  NetworkTokenCard,
  NetworkTokenHolderInfo,
  NetworkTokenState,
  ProvisionNetworkTokenInput,
} from './types.ts';

/**
 * zod schemas of the network token answers (spec "Network token"; docs/gap-decisions.md "Network
 * tokens"), transforming them into {@link NetworkToken}, the request-body builder of provisioning, and
 * the check of a `pan_alias` before it reaches a URL path.
 */

/** `YYYY-MM` (spec "Network token", `expires_at` and `card.expires_at`). */
const yearMonth = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/);

const stateWire: z.ZodType<NetworkTokenState> = openEnum(['ACTIVE', 'SUSPENDED', 'DELETED']);

const holderInfoWire = z
  .object({
    name: z.string().optional(),
    email: z.string().optional(),
    number: z.string().optional(),
    billing_address: billingAddressWire.optional(),
  })
  .transform(
    (wire): NetworkTokenHolderInfo =>
      withoutUndefined({
        name: wire.name,
        email: wire.email,
        phoneNumber: wire.number,
        billingAddress: wire.billing_address,
      }),
  );

const cardWire = z
  .object({
    last4: z.string().regex(/^\d{4}$/),
    bin: z.string().regex(/^\d{6,8}$/),
    expires_at: yearMonth,
    holder_info: holderInfoWire.optional(),
  })
  .transform((wire): NetworkTokenCard => {
    const card: NetworkTokenCard = { last4: wire.last4, bin: wire.bin, expiresAt: wire.expires_at };
    // An empty `holder_info` (none was given at provisioning) says nothing: left out like an absent one.
    if (wire.holder_info !== undefined && Object.keys(wire.holder_info).length > 0) {
      card.holderInfo = wire.holder_info;
    }
    return card;
  });

/**
 * A network token object → {@link NetworkToken}. Members other than `pan_alias` and `card` are
 * optional: the provision answer has no final state yet and the delete answer carries the card's
 * `last4`, `bin` and `expires_at` only (spec).
 */
export const networkTokenSchema = z
  .object({
    pan_alias: z.string().min(1),
    network_token_last4: z
      .string()
      .regex(/^\d{4}$/)
      .optional(),
    expires_at: yearMonth.optional(),
    state: stateWire.optional(),
    created_at: isoTimestamp.optional(),
    updated_at: isoTimestamp.optional(),
    card: cardWire,
  })
  .transform(
    (wire): NetworkToken =>
      withoutUndefined({
        panAlias: wire.pan_alias,
        networkTokenLast4: wire.network_token_last4,
        expiresAt: wire.expires_at,
        state: wire.state,
        createdAt: wire.created_at,
        updatedAt: wire.updated_at,
        card: wire.card,
      }),
  );

/** The answer of every network token endpoint: `{"data": <network token>}` → {@link NetworkToken}. */
export const networkTokenEnvelopeSchema = z
  .object({ data: networkTokenSchema })
  .transform(({ data }): NetworkToken => data);

function holderInfoBody(holder: NetworkTokenHolderInfo) {
  return withoutUndefined({
    name: holder.name,
    email: holder.email,
    number: holder.phoneNumber,
    billing_address: holder.billingAddress && billingAddressBody(holder.billingAddress),
  });
}

/** Body of `POST /network-tokens` (spec "Endpoints"); undefined members are omitted. */
export function provisionBody(input: ProvisionNetworkTokenInput): unknown {
  return withoutUndefined({
    pan_alias: input.panAlias,
    exp_month: input.expMonth,
    exp_year: input.expYear,
    holder_info: input.holderInfo && holderInfoBody(input.holderInfo),
  });
}

/** `tok_` aliases (contract §6: `tok_sandbox_…`; the provider's live form is `tok_live_…`). */
const TOK_ALIAS = /^tok_[A-Za-z0-9_]{1,124}$/;
/**
 * Format-preserving alias (spec "Card check request", `number`): six leading digits, up to nine
 * characters, a letter, up to nine characters, four trailing digits.
 */
const FORMAT_PRESERVING_ALIAS = /^\d{6}[0-9A-Za-z]{0,9}[A-Za-z][0-9A-Za-z]{0,9}\d{4}$/;

/**
 * Validates a caller-supplied `pan_alias` before it becomes a path segment. Paths are logged, so a
 * plain card number passed by mistake must never reach a URL.
 * @throws InvalidArgumentError (argument `panAlias`) unless it is a `tok_` alias (`tok_` then at most
 *   124 letters, digits or `_`) or a format-preserving alias; the message never repeats the value.
 */
export function assertPanAlias(panAlias: string): void {
  if (typeof panAlias !== 'string' || !(TOK_ALIAS.test(panAlias) || FORMAT_PRESERVING_ALIAS.test(panAlias))) {
    throw new InvalidArgumentError('panAlias', 'expected a tok_ alias or a format-preserving alias of a PAN');
  }
}
