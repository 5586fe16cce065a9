import { areaClient } from '../authorized-request.ts';
import { assertLookupNumber, type CardAttributes, cardAttributesSchema, lookupBody } from './schemas.ts';

export type { CardAttributes } from './schemas.ts';

/**
 * Client of the card attributes lookup (spec "Card attributes", area `{card_enrichment_url}`,
 * `application/json`).
 *
 * The looked-up `number` (a BIN, a PAN or a `tok_` alias) travels in the POST body only: never in a
 * URL, a log line or an error message. The client does not cache: attributes are static per data set
 * `version`, and the gateway caches them per BIN. The answer's `bin` is the matched prefix (6 or 8
 * digits), so a PAN's cache key is its first 8 digits (docs/gap-decisions.md "Upstream clients").
 *
 * Errors: {@link InvalidArgumentError} (argument `number`) for a value of the wrong shape (nothing is
 * sent); {@link UpstreamError} with area `card-attributes` (or `oauth`) otherwise, e.g. 400
 * `bad-request` with pointer `/number` (a PAN failing Luhn, an unknown alias), 404 `not-found` (no
 * attributes for the BIN), 500 `server-error`.
 */
export class CardAttributesClient extends areaClient('card-attributes', 'application/json') {
  /**
   * `POST /attributes/attributes` (spec): attributes of the card product of `number`: exactly six
   * digits are a BIN; a longer value is a PAN (Luhn-checked above 11 characters, single spaces or
   * hyphens between digits allowed); `tok_…` is an alias of a PAN in the vault. A lookup has no side
   * effect upstream but is a POST, so it is not retried automatically (except once after a 401).
   */
  async lookup(vault: string, number: string): Promise<CardAttributes> {
    assertLookupNumber(number);
    return this.send(vault, {
      method: 'POST',
      path: ['attributes', 'attributes'],
      body: JSON.stringify(lookupBody(number)),
      expectStatus: [200],
      schema: cardAttributesSchema,
    });
  }
}
