import { builder } from './builder.ts';

/** Card lifecycle event kinds of the spec's "Events" table: GraphQL name, wire value, meaning. */
const EVENT_KINDS = {
  UPDATED: ['au_card.updated', 'The card account number or expiration date changed.'],
  EXPIRED: ['au_card.expired', 'The card has expired.'],
  CLOSED: ['au_card.closed', 'The card account is closed.'],
  CONTACT_CARDHOLDER_ADVICE: [
    'au_card.contact_cardholder_advice',
    'Contact-cardholder advice from the network.',
  ],
  NON_PARTICIPATING: ['au_card.non_participating', 'Card reported as non-participating.'],
  UNKNOWN: ['au_card.unknown', 'Card reported as unknown by the network.'],
  ENROLLED: ['au_card.enrolled', 'Card enrolled.'],
  OPT_OUT: ['au_card.opt_out', 'Card opt-out.'],
  VALID: ['au_card.valid', 'Card valid, no change (card check result).'],
} as const;

type EventWireValue = (typeof EVENT_KINDS)[keyof typeof EVENT_KINDS][0];

/** `CardEventType`: wire value `au_card.<kind in lower case>`. */
export const CardEventTypeEnum = builder.enumType('CardEventType', {
  description: 'Card lifecycle event kind (spec "Events"); the wire value is `au_card.<kind in lower case>`.',
  values: Object.fromEntries(
    Object.entries(EVENT_KINDS).map(([name, [value, description]]) => [name, { value, description }]),
  ) as { [K in keyof typeof EVENT_KINDS]: { value: (typeof EVENT_KINDS)[K][0]; description: string } },
});

const KNOWN = new Set<string>(Object.values(EVENT_KINDS).map(([value]) => value));

/** The enum value for a wire event name, or null for a kind this schema does not know (yet). */
export function knownEventType(value: string | null | undefined): EventWireValue | null {
  return value && KNOWN.has(value) ? (value as EventWireValue) : null;
}
