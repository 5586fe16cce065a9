import { z } from 'zod';
import { maskPan } from '../../lib/pan.ts';
import type { JsonReviver } from '../http.ts';
import { cardIdSchema, isoTimestamp, withoutUndefined } from '../wire.ts';
import type {
  Cardholder,
  CardInterfaceCard,
  CardUpdatedValue,
  CardUpdateSubscription,
  CardUpdates,
  CreateCardInput,
} from './types.ts';

/**
 * zod schemas of the card interface's JSON:API documents (spec "Card (card interface)", "Card update
 * subscription", "Card updates"; docs/gap-decisions.md "Card interface"), each transforming the wire
 * document into its domain type, and the request-body builder of `POST /cards`.
 */

const cardholderWire = z
  .object({
    name: z.string().optional(),
    company: z.string().optional(),
    address: z
      .object({
        address1: z.string().optional(),
        address2: z.string().optional(),
        address3: z.string().optional(),
        address4: z.string().optional(),
        city: z.string().optional(),
        region: z.string().optional(),
        country: z.string().optional(),
        postal_code: z.string().optional(),
      })
      .optional(),
  })
  .transform((wire): Cardholder => {
    const cardholder: Cardholder = {};
    if (wire.name !== undefined) cardholder.name = wire.name;
    if (wire.company !== undefined) cardholder.company = wire.company;
    if (wire.address) {
      const { postal_code: postalCode, ...rest } = wire.address;
      cardholder.address = withoutUndefined({ ...rest, postalCode });
    }
    return cardholder;
  });

const accountUpdaterMetaWire = z.object({ subscription_id: z.string().min(1), state: z.string().min(1) });

const cardMetaWire = z.object({ account_updater: accountUpdaterMetaWire.optional() }).catchall(z.unknown());

/** `{"data":{"type":"cards","id","attributes":{…},"meta":{…}}}` → {@link CardInterfaceCard}. */
export const cardDocumentSchema = z
  .object({
    data: z.object({
      type: z.literal('cards'),
      id: cardIdSchema,
      attributes: z.object({
        pan_alias: z.string().min(1),
        cvc_alias: z.string().min(1).optional(),
        bin: z.string().regex(/^\d{6,8}$/),
        last4: z.string().regex(/^\d{4}$/),
        brand: z.string().min(1),
        exp_month: z.number().int().min(1).max(12),
        exp_year: z.number().int().min(0),
        cvc_status: z.string().optional(),
        cardholder: cardholderWire.optional(),
        token_type: z.enum(['dpan', 'mpan', 'pan']).optional(),
        wallet_type: z.enum(['apple_pay', 'google_pay']).optional(),
        created_at: isoTimestamp,
        updated_at: isoTimestamp,
      }),
      meta: cardMetaWire.optional(),
    }),
  })
  .transform(({ data }): CardInterfaceCard => {
    const a = data.attributes;
    const { account_updater: accountUpdater, ...meta } = data.meta ?? {};
    const card: CardInterfaceCard = {
      id: data.id,
      panAlias: a.pan_alias,
      bin: a.bin,
      last4: a.last4,
      brand: a.brand,
      expMonth: a.exp_month,
      expYear: a.exp_year,
      createdAt: a.created_at,
      updatedAt: a.updated_at,
      meta,
    };
    if (a.cvc_alias !== undefined) card.cvcAlias = a.cvc_alias;
    if (a.cvc_status !== undefined) card.cvcStatus = a.cvc_status;
    if (a.cardholder !== undefined) card.cardholder = a.cardholder;
    if (a.token_type !== undefined) card.tokenType = a.token_type;
    if (a.wallet_type !== undefined) card.walletType = a.wallet_type;
    if (accountUpdater) {
      card.accountUpdater = { subscriptionId: accountUpdater.subscription_id, state: accountUpdater.state };
    }
    return card;
  });

/**
 * `{"data":{"type":"card_update_subscriptions","id":"CUS…","attributes":{created_at,state,updated_at}}}`
 * → {@link CardUpdateSubscription} (the card id comes from the request).
 */
export function subscriptionDocumentSchema(cardId: string) {
  return z
    .object({
      data: z.object({
        type: z.literal('card_update_subscriptions'),
        id: z.string().min(1),
        attributes: z.object({
          state: z.string().min(1),
          created_at: isoTimestamp,
          updated_at: isoTimestamp,
        }),
      }),
    })
    .transform(({ data }): CardUpdateSubscription => {
      const subscription: CardUpdateSubscription = {
        id: data.id,
        cardId,
        state: data.attributes.state,
        createdAt: data.attributes.created_at,
        updatedAt: data.attributes.updated_at,
      };
      return subscription;
    });
}

/**
 * JSON reviver for the check answer: `old_value`/`new_value` numbers are kept as their source text,
 * because a 19-digit PAN sent as a JSON number does not survive conversion to a double.
 */
export const checkDocumentReviver: JsonReviver = (key, value, context) =>
  typeof value === 'number' && (key === 'old_value' || key === 'new_value') && context?.source !== undefined
    ? context.source
    : value;

/** A full PAN (JSON number or digit string) masked at once; the issue message never quotes it. */
const maskedPanValue = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const digits = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : '') : value;
  if (!/^\d{12,19}$/.test(digits)) {
    ctx.addIssue({ code: 'custom', message: 'expected a card number' });
    return z.NEVER;
  }
  return maskPan(digits);
});

/** An expiry month or year, sent as a number (or, after the reviver, its source text). */
const expiryValue = z.union([z.number(), z.string().regex(/^\d{1,4}$/)]).transform((value) => Number(value));

const updatedValueWire = z.discriminatedUnion('field_name', [
  z.object({ field_name: z.literal('pan'), old_value: maskedPanValue, new_value: maskedPanValue }),
  z.object({ field_name: z.literal('exp_month'), old_value: expiryValue, new_value: expiryValue }),
  z.object({ field_name: z.literal('exp_year'), old_value: expiryValue, new_value: expiryValue }),
]);

/**
 * `{"data":{"type":"card_updates","id","attributes":{"event","updated_values":[…]}}}` →
 * {@link CardUpdates}; PANs are masked here (docs/gap-decisions.md "Card interface", Check). Parse the
 * body with {@link checkDocumentReviver}.
 */
export function checkDocumentSchema(cardId: string) {
  return z
    .object({
      data: z.object({
        type: z.literal('card_updates'),
        attributes: z.object({
          event: z.string().min(1),
          updated_values: z.array(updatedValueWire).default([]),
        }),
      }),
    })
    .transform(
      ({ data }): CardUpdates => ({
        cardId,
        event: data.attributes.event,
        updatedValues: data.attributes.updated_values.map((item): CardUpdatedValue => {
          if (item.field_name === 'pan') {
            return { fieldName: 'pan', oldValue: item.old_value, newValue: item.new_value };
          }
          return {
            fieldName: item.field_name === 'exp_month' ? 'expMonth' : 'expYear',
            oldValue: item.old_value,
            newValue: item.new_value,
          };
        }),
      }),
    );
}

/** Builds the JSON:API body of `POST /cards` from {@link CreateCardInput}; undefined members are omitted. */
export function createCardDocument(input: CreateCardInput): unknown {
  const cardholder = input.cardholder;
  return {
    data: {
      type: 'cards',
      attributes: withoutUndefined({
        pan: input.pan,
        pan_alias: input.panAlias,
        cvc: input.cvc,
        cvc_alias: input.cvcAlias,
        cvc_status: input.cvcStatus,
        exp_month: input.expMonth,
        exp_year: input.expYear,
        cardholder: cardholder && {
          name: cardholder.name,
          company: cardholder.company,
          address: cardholder.address && {
            address1: cardholder.address.address1,
            address2: cardholder.address.address2,
            address3: cardholder.address.address3,
            address4: cardholder.address.address4,
            city: cardholder.address.city,
            region: cardholder.address.region,
            country: cardholder.address.country,
            postal_code: cardholder.address.postalCode,
          },
        },
        token_type: input.tokenType,
        wallet_type: input.walletType,
      }),
      ...(input.meta === undefined ? {} : { meta: input.meta }),
    },
  };
}
