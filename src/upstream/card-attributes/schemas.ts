import type { z } from 'zod';
import {
  cardAttributesResult,
  DOCUMENTED_LOOKUP_DIGITS_PATTERN,
  knownBrand,
} from '../../contracts/card-attributes.ts';
import { TOK_ALIAS_PATTERN } from '../../contracts/common.ts';
import { camelCaseKeys } from '../../lib/case.ts';
import { InvalidArgumentError } from '../errors.ts';

/**
 * The card attributes client's view of its contract (src/contracts/card-attributes.ts): the answer
 * parsed with the contract's schema and camelCased into {@link CardAttributes}, the request body of
 * `POST /attributes/attributes`, and the shape check of its `number`.
 */

/**
 * Card attributes of a card product (spec "Card attributes result"): `bin` (the matched 6- or 8-digit
 * prefix, an integer), `brand`, `issuingOrganization`, `cardType`, `cardCategory`,
 * `issuingCountryName`, `issuingCountryCode`, `maximumPanLength`, `cardCommercialType`,
 * `regulationStatus`, `version` (`YYYYMMDD` of the data set), `prepaidType`, `cobadgedBrands`. A
 * known `brand` in mixed case (the documented `Visa`) is read as its upper-case value (`VISA`);
 * `issuingCountryCode` is kept as sent (alpha-2 or alpha-3).
 */
export const cardAttributesSchema = cardAttributesResult.transform(({ brand, ...wire }) => ({
  ...camelCaseKeys(wire),
  ...(brand === undefined ? {} : { brand: knownBrand(brand) }),
}));

/** Card attributes, see {@link cardAttributesSchema}. */
export type CardAttributes = z.output<typeof cardAttributesSchema>;

/**
 * Checks the shape of a lookup `number` before any request: the provider's documented request
 * pattern (6 to 19 digits, each optionally followed by a whitespace character or hyphen,
 * `DOCUMENTED_LOOKUP_DIGITS_PATTERN`) or a `tok_` alias of the shape every alias argument takes
 * (`TOK_ALIAS_PATTERN`, within the documented `tok_.+`), so nothing the provider would refuse by shape
 * is sent. The Luhn rule for PANs over 11 digits is left to the upstream (400 `bad-request`, pointer
 * `/number`).
 * @throws InvalidArgumentError (argument `number`) otherwise; the message never repeats the value.
 */
export function assertLookupNumber(number: string): void {
  if (
    typeof number !== 'string' ||
    !(DOCUMENTED_LOOKUP_DIGITS_PATTERN.test(number) || TOK_ALIAS_PATTERN.test(number))
  ) {
    throw new InvalidArgumentError(
      'number',
      'expected 6 to 19 digits (each optionally followed by a space or hyphen) or a tok_ alias',
    );
  }
}

/** Body of `POST /attributes/attributes`: `{"number": …}`, the value as given (separators included). */
export function lookupBody(number: string): unknown {
  return { number };
}
