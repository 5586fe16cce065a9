import { builder } from './builder.ts';

/**
 * One vocabulary for a card's brand wherever the graph gives one (`Card.brandCode`,
 * `CardAttributes.brandCode`): the card interface writes brands in lower case (`visa`, `amex`), the
 * card attributes data set as upper-case names (`VISA`, `AMERICAN EXPRESS`); both read as the same
 * `CardBrand` value.
 */

/** Brand names as either upstream writes them, reduced to upper-case letters, and their enum value. */
const BRAND_BY_NAME: Readonly<Record<string, CardBrand>> = {
  VISA: 'VISA',
  MASTERCARD: 'MASTERCARD',
  AMEX: 'AMERICAN_EXPRESS',
  AMERICANEXPRESS: 'AMERICAN_EXPRESS',
  DISCOVER: 'DISCOVER',
  DINERS: 'DINERS_CLUB',
  DINERSCLUB: 'DINERS_CLUB',
  DINERSCLUBINTERNATIONAL: 'DINERS_CLUB',
  JCB: 'JCB',
  UNIONPAY: 'UNIONPAY',
  CHINAUNIONPAY: 'UNIONPAY',
  MAESTRO: 'MAESTRO',
};

/** Values of the `CardBrand` enum. */
export type CardBrand =
  | 'VISA'
  | 'MASTERCARD'
  | 'AMERICAN_EXPRESS'
  | 'DISCOVER'
  | 'DINERS_CLUB'
  | 'JCB'
  | 'UNIONPAY'
  | 'MAESTRO'
  | 'OTHER';

/**
 * The `CardBrand` of a brand name as an upstream wrote it, in any case, with or without spaces
 * (`visa`, `American Express`, `DINERS CLUB`); `OTHER` for a name it does not know, null for none.
 */
export function cardBrandCode(name: string | null | undefined): CardBrand | null {
  if (name == null) return null;
  const letters = name.toUpperCase().replace(/[^A-Z]/g, '');
  if (letters === '') return null;
  return BRAND_BY_NAME[letters] ?? 'OTHER';
}

/** Deprecation reason of the `brand` string fields, which name a brand in two vocabularies. */
export const BRAND_DEPRECATION =
  'Use `brandCode`: the same brand as one `CardBrand` value wherever the graph gives a brand (this field reads `visa` on a card and `VISA` on its attributes).';

export const CardBrandEnum = builder.enumType('CardBrand', {
  description:
    'A card brand, the same value wherever the graph gives a brand (a card, the attributes of its BIN).',
  values: {
    VISA: { description: 'Visa.' },
    MASTERCARD: { description: 'Mastercard.' },
    AMERICAN_EXPRESS: { description: 'American Express.' },
    DISCOVER: { description: 'Discover.' },
    DINERS_CLUB: { description: 'Diners Club.' },
    JCB: { description: 'JCB.' },
    UNIONPAY: { description: 'UnionPay.' },
    MAESTRO: { description: 'Maestro.' },
    OTHER: {
      description:
        'A brand this schema does not name yet; the deprecated `brand` string fields still carry its name.',
    },
  } as const,
});
