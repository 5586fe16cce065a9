import { z } from 'zod';
import {
  ACCOUNT_UPDATER_META,
  cardRecord,
  checkDocument,
  type createCardAttributes,
  duplicateCardDocument,
  subscriptionDocument,
} from '../../contracts/card-interface.ts';
import { CARD_ID_PATTERN } from '../../contracts/common.ts';
import { type CamelCaseKeys, camelCaseKeys, snakeCaseKeys } from '../../lib/case.ts';
import { cardBrandOf, maskedPanOf } from '../../lib/pan.ts';
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
 * with milliseconds, absent when the answer has none), `id`, `meta` (the user-defined `data.meta`
 * without `account_updater`, keys as the user wrote them) and `accountUpdater` (`{subscriptionId,
 * state}`, present while subscribed). The `pan` and `cvc` of the documented create answer are dropped
 * here, so they never leave this client; `first8` too (the BIN and last four are kept). A `brand` the
 * answer omits (the documented create answer) is derived from the BIN (`cardBrandOf`).
 */
export const cardDocumentSchema = cardDocumentSchemaWith(undefined);

/**
 * {@link cardDocumentSchema}, with the expiry of `sent` standing in for an `exp_month`/`exp_year`
 * the answer lacks (the create answer echoes what was sent; the provider's stored example ends
 * before them). Without `sent`, an answer without expiry is invalid (a card always has one).
 */
function cardDocumentSchemaWith(sent: { expMonth: number; expYear: number } | undefined) {
  return cardRecord.transform(({ data }, ctx) => {
    const { [ACCOUNT_UPDATER_META]: accountUpdater, ...meta } = data.meta ?? {};
    const {
      pan: _pan,
      cvc: _cvc,
      first8: _first8,
      brand: givenBrand,
      exp_month: givenMonth,
      exp_year: givenYear,
      ...attributes
    } = data.attributes;
    const brand = givenBrand ?? cardBrandOf(attributes.bin);
    const expMonth = givenMonth ?? sent?.expMonth;
    const expYear = givenYear ?? sent?.expYear;
    if (expMonth === undefined || expYear === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'expected exp_month and exp_year',
        path: ['data', 'attributes'],
      });
      return z.NEVER;
    }
    return {
      id: data.id,
      ...camelCaseKeys(attributes),
      ...(brand === undefined ? {} : { brand }),
      expMonth,
      expYear,
      meta: meta as Record<string, unknown>,
      ...(accountUpdater ? { accountUpdater: camelCaseKeys(accountUpdater) } : {}),
    };
  });
}

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

/**
 * Answer of `POST /cards` (docs/gap-decisions.md "Card interface"; sandbox contract §8), whatever its
 * success status, the expiry `sent` standing in for one the answer lacks: a whole card record (`card`, the 201; a 303 may carry one too), a reference to an
 * existing card (`reference`, the 303's `{"data":{"id"}}`), or no readable body (`none`, a 303 naming
 * the card in `Location` only).
 */
export function createCardAnswerSchema(sent: { expMonth: number; expYear: number }) {
  return z.union([
    cardDocumentSchemaWith(sent).transform((card) => ({ kind: 'card' as const, card })),
    duplicateCardDocument.transform(({ data }) => ({ kind: 'reference' as const, id: data.id })),
    z.undefined().transform(() => ({ kind: 'none' as const })),
  ]);
}

/**
 * The card id a 303's `Location` names (`…/cards/{card_id}`, absolute or path-absolute), or undefined
 * when it names none.
 */
export function cardIdOfLocation(location: string | undefined): string | undefined {
  if (location === undefined) return undefined;
  let segments: string[];
  try {
    segments = new URL(location, 'http://upstream.invalid').pathname.split('/');
  } catch {
    return undefined;
  }
  const id = segments.at(-1) ?? '';
  return segments.at(-2) === 'cards' && CARD_ID_PATTERN.test(id) ? id : undefined;
}

/**
 * A created card: the card record plus `duplicate`, true when the upstream's Duplicate Card Check
 * found the PAN already on file and answered 303 with the existing card instead of creating one
 * (sandbox contract §8).
 */
export type CreatedCard = CardInterfaceCard & { duplicate: boolean };
