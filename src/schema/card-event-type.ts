import type { CardEvent, CardEventKind } from '../contracts/account-updater.ts';
import { OTHER_EVENT_TYPE } from '../events/card-event.ts';
import { builder } from './builder.ts';
import { enumValuesOf } from './enum-values.ts';

/**
 * What each card lifecycle event kind means: the spec's "Events" table, plus the card interface's
 * `enrollment_failed` (sandbox contract §8: `cmp_au_card.enrollment_failed`, with a reason code).
 */
const EVENT_KIND_MEANINGS: Record<CardEventKind | 'enrollment_failed', string> = {
  updated: 'The card account number or expiration date changed.',
  expired: 'The card has expired.',
  closed: 'The card account is closed.',
  contact_cardholder_advice: 'Contact-cardholder advice from the network.',
  non_participating: 'Card reported as non-participating.',
  unknown: 'Card reported as unknown by the network.',
  enrolled: 'Card enrolled.',
  opt_out: 'Card opt-out.',
  valid: 'Card valid, no change (card check result).',
  enrollment_failed:
    'Enrolment failed (card interface `cmp_au_card.enrollment_failed`); the reason code is in `CardEvent.failureReason`.',
};

/**
 * `CardEventType`: one value per kind of src/contracts/account-updater.ts `CARD_EVENT_KINDS` and
 * `ENROLLMENT_FAILED`, named as the kind in upper case, wire value `au_card.<kind>` (a card interface
 * `cmp_au_card.<kind>` notification has the same kind, `CardEvent.source` tells them apart), and
 * `OTHER` for a notification kind this schema does not know (issue 19 item 3: open enumeration; its
 * wire name is in `CardEvent.event`).
 */
export const CardEventTypeEnum = builder.enumType('CardEventType', {
  description:
    'Card lifecycle event kind; the wire value is `au_card.<kind in lower case>` or `cmp_au_card.<kind in lower case>`. `OTHER`: a kind this schema does not know yet (see `CardEvent.event`).',
  values: {
    ...enumValuesOf(EVENT_KIND_MEANINGS, 'au_card.'),
    OTHER: {
      value: OTHER_EVENT_TYPE,
      description:
        'A notification kind this schema does not know (yet); its wire name is in `CardEvent.event`.',
    },
  } as const,
});

const KNOWN = new Set<string>(
  (Object.keys(EVENT_KIND_MEANINGS) as (keyof typeof EVENT_KIND_MEANINGS)[])
    .filter((kind) => kind !== 'enrollment_failed')
    .map((kind) => `au_card.${kind}`),
);

/** The enum value for a v1 card's wire `event`, or null for a kind this schema does not know (yet). */
export function knownEventType(value: string | null | undefined): CardEvent | null {
  return value && KNOWN.has(value) ? (value as CardEvent) : null;
}
