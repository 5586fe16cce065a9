import { z } from 'zod';
import { InvalidArgumentError } from '../errors.ts';
import { openEnum, withoutUndefined } from '../wire.ts';
import type { CardAttributes } from './types.ts';

/**
 * zod schema of the card attributes answer (spec "Card attributes result"; docs/gap-decisions.md
 * "Card attributes"), transforming it into {@link CardAttributes}, the request-body builder of
 * `POST /attributes/attributes`, and the shape check of its `number`.
 */

/** `{bin, brand, issuing_organization, …, version}` → {@link CardAttributes}. */
export const cardAttributesSchema = z
  .object({
    // A 6- or 8-digit prefix (IINs do not start with 0).
    bin: z.number().int().min(100_000).max(99_999_999),
    brand: openEnum(['VISA', 'MASTERCARD', 'AMERICAN EXPRESS', 'DISCOVER', 'DINERS CLUB', 'JCB']).optional(),
    issuing_organization: z.string().optional(),
    card_type: openEnum(['CREDIT', 'DEBIT', 'CHARGE']).optional(),
    card_category: openEnum([
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
    ]).optional(),
    issuing_country_name: z.string().optional(),
    issuing_country_code: z.string().optional(),
    maximum_pan_length: z.number().int().min(12).max(19).optional(),
    card_commercial_type: openEnum(['PERSONAL', 'COMMERCIAL']).optional(),
    regulation_status: openEnum(['REGULATED', 'UNREGULATED']).optional(),
    version: z.number().int().min(10_000_000).max(99_999_999),
    prepaid_type: openEnum(['RELOADABLE', 'NON_RELOADABLE']).optional(),
    cobadged_brands: z.string().optional(),
  })
  .transform(
    (wire): CardAttributes =>
      withoutUndefined({
        bin: wire.bin,
        brand: wire.brand,
        issuingOrganization: wire.issuing_organization,
        cardType: wire.card_type,
        cardCategory: wire.card_category,
        issuingCountryName: wire.issuing_country_name,
        issuingCountryCode: wire.issuing_country_code,
        maximumPanLength: wire.maximum_pan_length,
        cardCommercialType: wire.card_commercial_type,
        regulationStatus: wire.regulation_status,
        version: wire.version,
        prepaidType: wire.prepaid_type,
        cobadgedBrands: wire.cobadged_brands,
      }),
  );

/** Spec "Card attributes", `number`: 6 to 19 digits with optional single spaces or hyphens between them. */
const DIGITS_WITH_SEPARATORS = /^\d(?:[ -]?\d){5,18}$/;
/** Spec "Card attributes", `number`: a value starting with `tok_` (an alias of a PAN). */
const TOK_ALIAS = /^tok_[A-Za-z0-9_]{1,124}$/;

/**
 * Checks the shape of a lookup `number` (spec "Card attributes", Rules for `number`) before any
 * request. The Luhn rule for PANs over 11 characters is left to the upstream (400 `bad-request`,
 * pointer `/number`).
 * @throws InvalidArgumentError (argument `number`) otherwise; the message never repeats the value.
 */
export function assertLookupNumber(number: string): void {
  if (typeof number !== 'string' || !(DIGITS_WITH_SEPARATORS.test(number) || TOK_ALIAS.test(number))) {
    throw new InvalidArgumentError(
      'number',
      'expected 6 to 19 digits (single spaces or hyphens allowed between them) or a tok_ alias',
    );
  }
}

/** Body of `POST /attributes/attributes`: `{"number": …}`, the value as given (separators included). */
export function lookupBody(number: string): unknown {
  return { number };
}
