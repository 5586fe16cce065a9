import { randomUUID } from 'node:crypto';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import { notification } from '../../test/support/notifications.ts';

/**
 * A signed `au_card.updated` notification (contract §4) for the webhook receiver, built by the test
 * suite's notification builder: a fresh notification id, `timestamp`, `occurred_at` and `created_at`
 * = now (ms precision: the subscriber side computes delivery latency from it), masked numbers only.
 * @returns the id, the JSON body, its `vgs-signature` header value and the event timestamp (ms).
 */
export function signedCardNotification(
  tenant: string,
  cardId: string,
  secret: string,
): { id: string; body: string; signature: string; timestampMs: number } {
  const now = new Date();
  const iso = now.toISOString();
  const built = notification({
    tenant,
    cardId,
    timestamp: iso,
    details: { occurred_at: iso, created_at: `${iso.slice(0, 19)}Z` },
  });
  const body = JSON.stringify(built);
  return {
    id: built.id,
    body,
    signature: signWebhookBody(body, secret, Math.floor(now.getTime() / 1000)),
    timestampMs: now.getTime(),
  };
}

/** The event as the floor's fan-out server broadcasts it: the fields the bench subscription selects. */
export function floorEvent(cardId: string): string {
  return JSON.stringify({
    id: randomUUID(),
    type: 'AU_CARD_UPDATED',
    cardId,
    timestamp: new Date().toISOString(),
    newAccountNumber: '400021******2002',
  });
}

/** The subscription every fan-out subscriber runs (cardgraph); the floor sends the same fields. */
export const SUBSCRIPTION = 'subscription Live { cardEvents { id type cardId timestamp newAccountNumber } }';

/**
 * A 25-character card id (`CRD` + 22 letters) for bench notifications: letters only, so no digit
 * run of it can look like a card number to the redaction (which would mask it in results and make
 * the ids of different events collide).
 */
export function benchCardId(): string {
  let letters = '';
  for (let i = 0; i < 22; i++) letters += String.fromCharCode(97 + Math.floor(Math.random() * 26));
  return `CRD${letters}`;
}
