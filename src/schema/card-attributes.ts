import { InputValidationError } from '@pothos/plugin-validation';
import { z } from 'zod';
import {
  CARD_CATEGORIES,
  CARD_COMMERCIAL_TYPES,
  CARD_TYPES,
  DOCUMENTED_LOOKUP_DIGITS_PATTERN,
  LUHN_FREE_MAX_DIGITS,
  PREPAID_TYPES,
  RAW_BIN_DIGITS,
  REGULATION_STATUSES,
} from '../contracts/card-attributes.ts';
import { TOK_ALIAS_PATTERN } from '../contracts/common.ts';
import { BinNotDiscernedError, CardAttributesNotFoundError } from '../errors.ts';
import { isLuhnValid } from '../lib/pan.ts';
import type { CardAttributes } from '../upstream/index.ts';
import { AccountUpdaterCardRef } from './account-updater-card.ts';
import { builder } from './builder.ts';
import { CardRef, digitsOnly } from './card.ts';
import { BRAND_DEPRECATION, CardBrandEnum, cardBrandCode } from './card-brand.ts';
import { nullableStrings } from './nullable-strings.ts';
import { costExtension } from './paging.ts';
import { vaultIdArg, vaultOf } from './vault.ts';

/**
 * Card attributes (spec "Card attributes result", POST /attributes/attributes) and the joins that
 * read them by BIN: `Card.attributes`, `AccountUpdaterCard.attributes` (and, in
 * network-token.ts, `NetworkToken.attributes`).
 */

/**
 * An enum over the values the specification (and the sandbox's BIN table) observe (the closed lists of
 * src/contracts/card-attributes.ts), with `UNKNOWN`
 * for an upstream value this schema does not know yet, so a new value never fails a query.
 */
function observedEnum<const V extends readonly string[]>(
  name: string,
  description: string,
  values: V,
  meanings: Record<V[number], string>,
) {
  const ref = builder.enumType(name, {
    description: `${description} \`UNKNOWN\` stands for an upstream value this schema does not know yet.`,
    values: {
      ...Object.fromEntries(
        values.map((value) => [value, { value, description: meanings[value as V[number]] }]),
      ),
      UNKNOWN: {
        value: 'UNKNOWN',
        description: 'A value the upstream sent that this schema does not know yet.',
      },
    } as Record<V[number] | 'UNKNOWN', { value: V[number] | 'UNKNOWN'; description: string }>,
  });
  const known = new Set<string>(values);
  const map = (value: string | undefined | null): V[number] | 'UNKNOWN' | null =>
    value == null ? null : known.has(value) ? (value as V[number]) : 'UNKNOWN';
  return [ref, map] as const;
}

const [CardTypeEnum, cardType] = observedEnum('CardType', 'Funding type of the card product.', CARD_TYPES, {
  CREDIT: 'Credit card.',
  DEBIT: 'Debit card (observed by the specification).',
  CHARGE: 'Charge card.',
});
const [CardCategoryEnum, cardCategory] = observedEnum(
  'CardCategory',
  'Product category of the card.',
  CARD_CATEGORIES,
  {
    PREPAID: 'Prepaid card (observed by the specification).',
    STANDARD: 'Standard product.',
    CLASSIC: 'Classic product.',
    GOLD: 'Gold product.',
    PLATINUM: 'Platinum product.',
    SIGNATURE: 'Signature product.',
    INFINITE: 'Infinite product.',
    WORLD: 'World product.',
    WORLD_ELITE: 'World Elite product.',
    BUSINESS: 'Business product.',
    CORPORATE: 'Corporate product.',
    PURCHASING: 'Purchasing (procurement) product.',
  },
);
const [CommercialTypeEnum, commercialType] = observedEnum(
  'CardCommercialType',
  'Consumer or commercial product.',
  CARD_COMMERCIAL_TYPES,
  {
    PERSONAL: 'Consumer card (observed by the specification).',
    COMMERCIAL: 'Commercial card.',
  },
);
const [RegulationStatusEnum, regulationStatus] = observedEnum(
  'RegulationStatus',
  'Interchange regulation status of the issuer.',
  REGULATION_STATUSES,
  { REGULATED: 'Regulated issuer.', UNREGULATED: 'Unregulated issuer (observed by the specification).' },
);
const [PrepaidTypeEnum, prepaidType] = observedEnum(
  'PrepaidType',
  'Kind of prepaid product.',
  PREPAID_TYPES,
  {
    RELOADABLE: 'Reloadable prepaid card (observed by the specification).',
    NON_RELOADABLE: 'Single-load prepaid card.',
  },
);

export const CardAttributesRef = builder.objectRef<CardAttributes>('CardAttributes').implement({
  description: 'Attributes of a card product by its BIN.',
  fields: (t) => ({
    bin: t.string({
      description: 'The BIN (6 to 8 digits) whose entry answered.',
      resolve: (a) => String(a.bin),
    }),
    brand: t.string({
      nullable: true,
      description:
        'Card brand name, upper case for the known brands (`VISA`, `MASTERCARD`, `AMERICAN EXPRESS`, …) whatever case the upstream wrote.',
      deprecationReason: BRAND_DEPRECATION,
      resolve: (a) => a.brand ?? null,
    }),
    brandCode: t.field({
      type: CardBrandEnum,
      nullable: true,
      description: 'Card brand, the same value `Card.brandCode` gives; null when the data set names none.',
      resolve: (a) => cardBrandCode(a.brand),
    }),
    ...nullableStrings(t, {
      issuingOrganization: 'Issuer name.',
      issuingCountryName: 'Issuing country name.',
      issuingCountryCode:
        'Issuing country code as the upstream gives it: ISO 3166-1 alpha-2 (`US`) or alpha-3 (`USA`).',
      cobadgedBrands: 'Co-badged brand name.',
    }),
    cardType: t.field({
      type: CardTypeEnum,
      nullable: true,
      description: 'Funding type, e.g. `DEBIT`.',
      resolve: (a) => cardType(a.cardType),
    }),
    cardCategory: t.field({
      type: CardCategoryEnum,
      nullable: true,
      description: 'Category, e.g. `PREPAID`.',
      resolve: (a) => cardCategory(a.cardCategory),
    }),
    maximumPanLength: t.exposeInt('maximumPanLength', { nullable: true, description: 'Maximum PAN length.' }),
    cardCommercialType: t.field({
      type: CommercialTypeEnum,
      nullable: true,
      description: 'Consumer or commercial, e.g. `PERSONAL`.',
      resolve: (a) => commercialType(a.cardCommercialType),
    }),
    regulationStatus: t.field({
      type: RegulationStatusEnum,
      nullable: true,
      description: 'Regulation status, e.g. `UNREGULATED`.',
      resolve: (a) => regulationStatus(a.regulationStatus),
    }),
    prepaidType: t.field({
      type: PrepaidTypeEnum,
      nullable: true,
      description: 'Prepaid kind, e.g. `RELOADABLE`.',
      resolve: (a) => prepaidType(a.prepaidType),
    }),
    version: t.exposeInt('version', { description: 'Data set version, an eight-digit date-like number.' }),
  }),
});

/**
 * `number` of a card attributes lookup (spec "Card attributes", rules 1-3, with the provider's
 * documented request pattern `(^(\d[\s-]?){6,19}$|tok_.+)`): 6 to 19 digits, each optionally followed
 * by a space or hyphen, or a `tok_` alias; a PAN longer than 11 digits must pass Luhn.
 */
const attributesNumberSchema = z
  .string()
  .refine((v) => TOK_ALIAS_PATTERN.test(v) || DOCUMENTED_LOOKUP_DIGITS_PATTERN.test(v), {
    message:
      'must be a BIN, a card number of up to 19 digits (each optionally followed by a space or hyphen), or a tok_ alias',
    // A malformed value has no Luhn check to fail: report only the shape.
    abort: true,
  })
  .refine(
    (v) => v.startsWith('tok_') || digitsOnly(v).length <= LUHN_FREE_MAX_DIGITS || isLuhnValid(digitsOnly(v)),
    'must pass the Luhn check',
  );

builder.queryField('cardAttributes', (t) =>
  t.field({
    type: CardAttributesRef,
    nullable: true,
    description:
      'Attributes of a card product by BIN, PAN or `tok_` alias (POST /attributes/attributes); null for a BIN the data set does not know (its 404, or its 422 for a raw 6-digit BIN); `BinNotDiscernedError` when the upstream can discern no BIN in a PAN or alias (its documented 422).',
    authScopes: { scope: 'card-attributes:basic' },
    extensions: costExtension({ upstreamCalls: 1 }),
    errors: { types: [InputValidationError, BinNotDiscernedError] },
    args: {
      number: t.arg.string({
        description: 'A 6-digit BIN, a PAN or a `tok_` alias.',
        validate: attributesNumberSchema,
      }),
      vaultId: t.arg.string(vaultIdArg),
    },
    resolve: async (_root, args, context) => {
      const vaultId = vaultOf(context, args.vaultId);
      const number = args.number.startsWith('tok_') ? args.number : digitsOnly(args.number);
      if (number.length === RAW_BIN_DIGITS)
        return context.loaders.binAttributes.load({ vaultId, bin: number });
      return context.upstream.cardAttributes.lookup(vaultId, number).catch((error: unknown) => {
        if (error instanceof CardAttributesNotFoundError) return null;
        throw error;
      });
    },
  }),
);

/** The attributes join of a card that knows its BIN: through the per-request loader and the BIN cache. */
export function attributesOfBin(
  context: Parameters<typeof vaultOf>[0],
  vaultId: string,
  bin: string | undefined,
) {
  // A BIN the upstream cannot place (404, or the documented 422) is null, cached by the loader.
  return bin && /^\d{6}/.test(bin)
    ? context.loaders.binAttributes.load({ vaultId, bin: bin.slice(0, 6) })
    : null;
}

builder.objectField(CardRef, 'attributes', (t) =>
  t.field({
    type: CardAttributesRef,
    nullable: true,
    description: 'Attributes of the card product by its BIN (needs `card-attributes:basic`); cached per BIN.',
    authScopes: { scope: 'card-attributes:basic' },
    extensions: costExtension({ upstreamCalls: 1 }),
    resolve: (card, _args, context) => attributesOfBin(context, card.vaultId, card.bin),
  }),
);

builder.objectField(AccountUpdaterCardRef, 'attributes', (t) =>
  t.field({
    type: CardAttributesRef,
    nullable: true,
    description:
      'Attributes of the card product by the BIN of its number alias (needs `card-attributes:basic`); cached per BIN.',
    authScopes: { scope: 'card-attributes:basic' },
    extensions: costExtension({ upstreamCalls: 1 }),
    resolve: (card, _args, context) => attributesOfBin(context, card.vaultId, card.numberAlias),
  }),
);
