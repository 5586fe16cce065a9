import type { z } from 'zod';
import {
  ACCOUNT_UPDATER_META,
  cardRecord,
  checkDocument,
  type createCardAttributes,
  subscriptionDocument,
} from '../../contracts/card-interface.ts';
import { type CamelCaseKeys, camelCaseKeys, snakeCaseKeys } from '../../lib/case.ts';
import { maskedPanOf } from '../../lib/pan.ts';
import type { JsonReviver } from '../http.ts';

/**
 * The card interface client's view of its contract (src/contracts/card-interface.ts): each answer is
 * parsed with the contract's schema and projected into a camelCase domain value whose type is derived
 * from the contract (`z.output`), so a member added to the contract reaches the domain type, and from
 * there the GraphQL type, without code here. No domain value holds a PAN or CVC in the clear.
 */

/**
 * A card of the card interface (docs/gap-decisions.md "Card interface", Card record): the record's
 * attributes camelCased (`panAlias`, `cvcAlias`, `bin`, `last4`, `brand`, `expMonth`, `expYear` two
 * digits, `cvcStatus`, `cardholder`, `tokenType`, `walletType`, `createdAt`/`updatedAt` ISO 8601 UTC
 * with milliseconds), `id`, `meta` (the user-defined `data.meta` without `account_updater`, keys as
 * the user wrote them) and `accountUpdater` (`{subscriptionId, state}`, present while subscribed).
 */
export const cardDocumentSchema = cardRecord.transform(({ data }) => {
  const { [ACCOUNT_UPDATER_META]: accountUpdater, ...meta } = data.meta ?? {};
  return {
    id: data.id,
    ...camelCaseKeys(data.attributes),
    meta: meta as Record<string, unknown>,
    ...(accountUpdater ? { accountUpdater: camelCaseKeys(accountUpdater) } : {}),
  };
});

/** A card of the card interface, see {@link cardDocumentSchema}. */
export type CardInterfaceCard = z.output<typeof cardDocumentSchema>;
/** Cardholder of a card (spec "Card (card interface)", `cardholder`). */
export type Cardholder = NonNullable<CardInterfaceCard['cardholder']>;
/** Cardholder address: `address1`-`address4`, `city`, and further scalar members as given. */
export type CardholderAddress = NonNullable<Cardholder['address']>;
/** `token_type` (spec "Card (card interface)"). */
export type CardTokenType = NonNullable<CardInterfaceCard['tokenType']>;
/** `wallet_type` (spec "Card (card interface)"). */
export type CardWalletType = NonNullable<CardInterfaceCard['walletType']>;

/**
 * Answer of `POST /cards/{card_id}/card-update-subscriptions` (spec "Card update subscription"):
 * `id` (`CUS…`), `cardId` (from the request), `state` (`enrolled`, `failed` for 4002 test cards,
 * others passed through), timestamps as in {@link CardInterfaceCard}.
 */
export function subscriptionDocumentSchema(cardId: string) {
  return subscriptionDocument.transform(({ data }) => ({
    id: data.id,
    cardId,
    ...camelCaseKeys(data.attributes),
  }));
}

/** Answer of the subscribe call, see {@link subscriptionDocumentSchema}. */
export type CardUpdateSubscription = z.output<ReturnType<typeof subscriptionDocumentSchema>>;

/**
 * JSON reviver for the check answer: `old_value`/`new_value` numbers are kept as their source text,
 * because a 19-digit PAN sent as a JSON number does not survive conversion to a double.
 */
export const checkDocumentReviver: JsonReviver = (key, value, context) =>
  typeof value === 'number' && (key === 'old_value' || key === 'new_value') && context?.source !== undefined
    ? context.source
    : value;

/**
 * One changed field of an on-demand check (spec "Card updates", `updated_values`). The upstream sends
 * full PANs for `pan`; they are masked to BIN and last four (`510026******3001`) while parsing.
 */
export type CardUpdatedValue =
  | { fieldName: 'pan'; oldValue: string; newValue: string }
  | { fieldName: 'expMonth' | 'expYear'; oldValue: number; newValue: number };

/** A full PAN (digits) masked at once; anything else is not a card number (src/lib/pan.ts). */
const maskedPan = maskedPanOf;

/**
 * Answer of `POST /cards/{card_id}/check` (spec "Card updates"; docs/gap-decisions.md "Card
 * interface", Check) → `{cardId, event, updatedValues}`: `event` `updated`, `valid`, `closed`,
 * `expired`, `contact_cardholder_advice`, `non_participating` (others passed through);
 * `updatedValues` empty unless `updated`, PANs masked here. Parse the body with
 * {@link checkDocumentReviver}.
 */
export function checkDocumentSchema(cardId: string) {
  return checkDocument.transform(({ data }, ctx) => {
    const updatedValues: CardUpdatedValue[] = [];
    for (const item of data.attributes.updated_values) {
      if (item.field_name === 'pan') {
        const oldValue = maskedPan(item.old_value);
        const newValue = maskedPan(item.new_value);
        if (oldValue === undefined || newValue === undefined) {
          // The issue names the member only: the value may be card data.
          ctx.addIssue({ code: 'custom', message: 'expected a card number', path: ['updated_values'] });
          continue;
        }
        updatedValues.push({ fieldName: 'pan', oldValue, newValue });
      } else {
        updatedValues.push({
          fieldName: item.field_name === 'exp_month' ? 'expMonth' : 'expYear',
          oldValue: Number(item.old_value),
          newValue: Number(item.new_value),
        });
      }
    }
    return { cardId, event: data.attributes.event, updatedValues };
  });
}

/** Answer of the check call, see {@link checkDocumentSchema}. */
export type CardUpdates = z.output<ReturnType<typeof checkDocumentSchema>>;

/**
 * Input of `POST /cards`: the contract's create attributes camelCased (`pan` or `panAlias`, `cvc`,
 * `cvcAlias`, `cvcStatus`, `expMonth` 1-12, `expYear` two digits, `cardholder`, `tokenType`,
 * `walletType`) and `meta`, sent as `data.meta` (free-form; `account_updater` is the service's). The
 * upstream validates; its 400 names the bad member in `UpstreamError.pointer`.
 */
export type CreateCardInput = CamelCaseKeys<z.input<typeof createCardAttributes>> & {
  meta?: Record<string, unknown>;
};

/** Builds the JSON:API body of `POST /cards` from {@link CreateCardInput}; undefined members are omitted. */
export function createCardDocument({ meta, ...attributes }: CreateCardInput): unknown {
  return {
    data: {
      type: 'cards',
      attributes: snakeCaseKeys(attributes),
      ...(meta === undefined ? {} : { meta }),
    },
  };
}
