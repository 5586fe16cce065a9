import type { CardEvent, CardEventKind } from '../contracts/account-updater.ts';
import { builder } from './builder.ts';
import { enumValuesOf } from './enum-values.ts';

/** What each card lifecycle event kind of the spec's "Events" table means. */
const EVENT_KIND_MEANINGS: Record<CardEventKind, string> = {
  updated: 'The card account number or expiration date changed.',
  expired: 'The card has expired.',
  closed: 'The card account is closed.',
  contact_cardholder_advice: 'Contact-cardholder advice from the network.',
  non_participating: 'Card reported as non-participating.',
  unknown: 'Card reported as unknown by the network.',
  enrolled: 'Card enrolled.',
  opt_out: 'Card opt-out.',
  valid: 'Card valid, no change (card check result).',
};

/**
 * `CardEventType`: one value per kind of src/contracts/account-updater.ts `CARD_EVENT_KINDS`, named
 * as the kind in upper case, wire value `au_card.<kind>`.
 */
export const CardEventTypeEnum = builder.enumType('CardEventType', {
  description: 'Card lifecycle event kind (spec "Events"); the wire value is `au_card.<kind in lower case>`.',
  values: enumValuesOf(EVENT_KIND_MEANINGS, 'au_card.'),
});

const KNOWN = new Set<string>(Object.keys(EVENT_KIND_MEANINGS).map((kind) => `au_card.${kind}`));

/** The enum value for a wire event name, or null for a kind this schema does not know (yet). */
export function knownEventType(value: string | null | undefined): CardEvent | null {
  return value && KNOWN.has(value) ? (value as CardEvent) : null;
}
