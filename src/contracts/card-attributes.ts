import { z } from 'zod';
import { openEnum, TOK_ALIAS_PATTERN } from './common.ts';

/**
 * The card attributes area (`{card_enrichment_url}`, `application/json`) written once: spec "Card
 * attributes" (its `number` rules) and "Card attributes result", with the closed lists of
 * docs/gap-decisions.md "Card attributes". Imported by the upstream client
 * (src/upstream/card-attributes), the sandbox (src/sandbox/card-attributes.ts) and the GraphQL input
 * validation (src/schema/card-attributes.ts).
 */

/** Media type of the area (spec, area table). */
export const CARD_ATTRIBUTES_MEDIA_TYPE = 'application/json';

/**
 * Lookup `number` as digits (spec "Card attributes": 6 to 19 digits with optional single spaces or
 * hyphens between them); the other accepted form is a `tok_` alias (src/contracts/common.ts).
 */
export const LOOKUP_DIGITS_PATTERN = /^\d(?:[ -]?\d){5,18}$/;
/**
 * Lookup `number` as digits by the provider's documented request pattern (`(^(\d[\s-]?){6,19}$|tok_.+)`,
 * provider-docs `examples.json`): 6 to 19 digits, each optionally followed by one whitespace character
 * or hyphen (a trailing one included). A superset of {@link LOOKUP_DIGITS_PATTERN}; the gateway and the
 * documented sandbox read it; separators are removed before counting digits.
 */
export const DOCUMENTED_LOOKUP_DIGITS_PATTERN = /^(?:\d[\s-]?){6,19}$/;
/** The documented request pattern's alias form: `tok_` and at least one more character. */
export const DOCUMENTED_LOOKUP_ALIAS_PATTERN = /^tok_.+$/;
/** Digits of a raw BIN (spec, rule 1: a `number` of exactly 6 digits is a BIN). */
export const RAW_BIN_DIGITS = 6;
/** A PAN with more digits than this must pass Luhn (spec, rule 3). */
export const LUHN_FREE_MAX_DIGITS = 11;

/** Body of `POST /attributes/attributes` (spec: `number`, digits with separators or a `tok_` alias). */
export const lookupRequest = z.object({
  number: z
    .string()
    .refine(
      (value) => LOOKUP_DIGITS_PATTERN.test(value) || TOK_ALIAS_PATTERN.test(value),
      'must be 6 to 19 digits (single spaces or hyphens allowed between them) or a tok_ alias',
    ),
});

/**
 * `brand` values (spec: "Card brand name"; docs/gap-decisions.md closes the list), upper case as the
 * specification's reading sends them; the documented answer writes them in mixed case (`Visa`), which
 * the reader folds onto these (see {@link knownBrand}).
 */
export const CARD_ATTRIBUTE_BRANDS = [
  'VISA',
  'MASTERCARD',
  'AMERICAN EXPRESS',
  'DISCOVER',
  'DINERS CLUB',
  'JCB',
] as const;
/** Brand names of the documented answer (sandbox contract §8: mixed case), by the upper-case value. */
export const DOCUMENTED_BRAND_NAMES: Readonly<Record<(typeof CARD_ATTRIBUTE_BRANDS)[number], string>> = {
  VISA: 'Visa',
  MASTERCARD: 'Mastercard',
  'AMERICAN EXPRESS': 'American Express',
  DISCOVER: 'Discover',
  'DINERS CLUB': 'Diners Club',
  JCB: 'JCB',
};

/**
 * A `brand` as read: a known brand in any letter case becomes its upper-case value (`Visa` →
 * `VISA`), so the graph answers one spelling whatever the upstream's; other values pass unchanged.
 */
export function knownBrand(value: string): string {
  const upper = value.toUpperCase();
  return (CARD_ATTRIBUTE_BRANDS as readonly string[]).includes(upper) ? upper : value;
}

/** `card_type` values (spec: `DEBIT` observed). */
export const CARD_TYPES = ['CREDIT', 'DEBIT', 'CHARGE'] as const;
/** `card_category` values (spec: `PREPAID` observed). */
export const CARD_CATEGORIES = [
  'STANDARD',
  'CLASSIC',
  'GOLD',
  'PLATINUM',
  'SIGNATURE',
  'INFINITE',
  'WORLD',
  'WORLD_ELITE',
  'BUSINESS',
  'CORPORATE',
  'PURCHASING',
  'PREPAID',
] as const;
/** `card_commercial_type` values (spec: `PERSONAL` observed). */
export const CARD_COMMERCIAL_TYPES = ['PERSONAL', 'COMMERCIAL'] as const;
/** `regulation_status` values (spec: `UNREGULATED` observed). */
export const REGULATION_STATUSES = ['REGULATED', 'UNREGULATED'] as const;
/** `prepaid_type` values (spec: `RELOADABLE` observed). */
export const PREPAID_TYPES = ['RELOADABLE', 'NON_RELOADABLE'] as const;

/**
 * The "Card attributes result" (spec): `bin` the matched prefix as an integer of 6 to 8 digits (IINs
 * do not start with 0; the documented example has 7, `4111111`), `version` the eight-digit
 * `YYYYMMDD` data set, the rest as the spec's table; `prepaid_type` only for `PREPAID`,
 * `cobadged_brands` only for co-badged products (docs/gap-decisions.md "Card attributes").
 * `brand` may be upper case (specification) or mixed case (documented: `Visa`),
 * `issuing_country_code` alpha-2 (`US`) or alpha-3 (`USA`). Values outside the closed lists pass
 * through when read; members the contract does not name are ignored.
 */
export const cardAttributesResult = z.object({
  bin: z.int().min(100_000).max(99_999_999),
  brand: openEnum(CARD_ATTRIBUTE_BRANDS).optional(),
  issuing_organization: z.string().optional(),
  card_type: openEnum(CARD_TYPES).optional(),
  card_category: openEnum(CARD_CATEGORIES).optional(),
  issuing_country_name: z.string().optional(),
  issuing_country_code: z.string().optional(),
  maximum_pan_length: z.int().min(12).max(19).optional(),
  card_commercial_type: openEnum(CARD_COMMERCIAL_TYPES).optional(),
  regulation_status: openEnum(REGULATION_STATUSES).optional(),
  version: z.int().min(10_000_000).max(99_999_999),
  prepaid_type: openEnum(PREPAID_TYPES).optional(),
  cobadged_brands: z.string().optional(),
});
