/**
 * The card attributes area (`{card_enrichment_url}`, `application/json`) written once: spec "Card
 * attributes" (its `number` rules) and "Card attributes result", gaps per docs/gap-decisions.md "Card
 * attributes".
 */

/**
 * Lookup `number` as digits (spec "Card attributes": 6 to 19 digits with optional single spaces or
 * hyphens between them); the other accepted form is a `tok_` alias (src/contracts/common.ts).
 */
export const LOOKUP_DIGITS_PATTERN = /^\d(?:[ -]?\d){5,18}$/;
