/**
 * Domain types of the card attributes client (spec "Card attributes result", area
 * `{card_enrichment_url}`, media type `application/json`). Field names are camelCase. Attributes
 * describe a card product (a BIN range), never one card: nothing here identifies a cardholder.
 *
 * The enumerations below list the values known from the spec's observations and the sandbox; an
 * upstream value outside them is passed through as a string (the spec: "complete enumerations not
 * shown"), so a new value never fails a lookup.
 */

/** `brand` (the sandbox's names of the six card families of the spec). */
export type CardAttributesBrand =
  | 'VISA'
  | 'MASTERCARD'
  | 'AMERICAN EXPRESS'
  | 'DISCOVER'
  | 'DINERS CLUB'
  | 'JCB'
  | (string & {});

/** `card_type` (spec: `DEBIT` observed). */
export type CardType = 'CREDIT' | 'DEBIT' | 'CHARGE' | (string & {});

/** `card_category` (spec: `PREPAID` observed). */
export type CardCategory =
  | 'STANDARD'
  | 'CLASSIC'
  | 'GOLD'
  | 'PLATINUM'
  | 'SIGNATURE'
  | 'INFINITE'
  | 'WORLD'
  | 'WORLD_ELITE'
  | 'BUSINESS'
  | 'CORPORATE'
  | 'PURCHASING'
  | 'PREPAID'
  | (string & {});

/** `card_commercial_type` (spec: `PERSONAL` observed). */
export type CardCommercialType = 'PERSONAL' | 'COMMERCIAL' | (string & {});

/** `regulation_status` (spec: `UNREGULATED` observed). */
export type RegulationStatus = 'REGULATED' | 'UNREGULATED' | (string & {});

/** `prepaid_type` (spec: `RELOADABLE` observed). */
export type PrepaidType = 'RELOADABLE' | 'NON_RELOADABLE' | (string & {});

/**
 * Attributes of a card product (spec "Card attributes result"; docs/gap-decisions.md "Card
 * attributes").
 * - `bin`: the BIN prefix the attributes belong to (6 or 8 digits), as an integer (e.g. `510026`);
 *   an 8-digit prefix refines its 6-digit parent.
 * - `issuingOrganization`, `issuingCountryName`: free text; `issuingCountryCode`: country code as sent
 *   (ISO 3166-1 alpha-2 in the sandbox).
 * - `prepaidType`: only for `cardCategory` `PREPAID` in the sandbox.
 * - `maximumPanLength`: digits of the longest PAN of the range.
 * - `version`: eight-digit date-like integer naming the data set (e.g. `20260101`). Attributes are
 *   static for one version, so a cache keyed by BIN stays valid until `version` changes.
 * - `cobadgedBrands`: co-badged brand name(s), as sent.
 */
export interface CardAttributes {
  bin: number;
  brand?: CardAttributesBrand;
  issuingOrganization?: string;
  cardType?: CardType;
  cardCategory?: CardCategory;
  issuingCountryName?: string;
  issuingCountryCode?: string;
  maximumPanLength?: number;
  cardCommercialType?: CardCommercialType;
  regulationStatus?: RegulationStatus;
  version: number;
  prepaidType?: PrepaidType;
  cobadgedBrands?: string;
}
