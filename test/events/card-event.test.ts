import { describe, expect, it } from 'vitest';
import { CARD_EVENT_TYPES, type CardEvent, parseCardNotification } from '../../src/events/card-event.ts';
import { readTimestamp } from '../../src/events/notification-envelope.ts';
import {
  CARD_INTERFACE_TEST_CARD_IDS,
  DOCUMENTED_V1_DETAILS,
  documentedV1Notification,
  notification,
  TEST_CARD_ID,
} from '../support/fixtures.ts';

/** The event of a body that must map; fails the test otherwise. */
function eventOf(body: unknown, receivedAt?: string): CardEvent {
  const result = parseCardNotification(body, receivedAt);
  if (!result.ok) throw new Error(`expected the notification to map, got ${result.reason}`);
  return result.event;
}

describe('parseCardNotification', () => {
  it('maps a notification of the specification (all members) to a frozen CardEvent', () => {
    const body = notification();
    const event = eventOf(body);
    expect(event).toEqual({
      id: body.id,
      type: 'au_card.updated',
      event: 'au_card.updated',
      source: 'account_updater',
      tenant: 'tntsandbox1',
      cardId: TEST_CARD_ID,
      occurredAt: '2026-11-21T05:01:02.123Z',
      timestamp: '2026-11-21T05:01:03.456Z',
      createdAt: '2026-11-21T05:01:02Z',
      newAccountNumber: '510026******1001',
      oldAccountNumber: '510026******2002',
      newExpiry: { month: 12, year: 2029 },
      oldExpiry: { month: 1, year: 2026 },
      expMonth: 12,
      expYear: 2029,
      fingerprint: body.fingerprint,
      grouping: 'every_single',
      occurrence: 1,
      orgId: 'ACsandbox000000000000001',
      integrationId: 'Integ1abcdefghijklmnopqr',
      summary: `Card ${TEST_CARD_ID} au_card.updated`,
      description: 'Card account updater event sent',
    });
    expect(Object.isFrozen(event)).toBe(true);
    expect(Object.isFrozen(event.newExpiry)).toBe(true);
  });

  it('maps each documented v1 per-event subset, with only the members sent', () => {
    expect(eventOf(documentedV1Notification('au_card.non_participating'))).toEqual(
      expect.objectContaining({ type: 'au_card.non_participating', cardId: TEST_CARD_ID }),
    );
    const nonParticipating = eventOf(documentedV1Notification('au_card.non_participating'));
    for (const member of [
      'createdAt',
      'oldAccountNumber',
      'newAccountNumber',
      'oldExpiry',
      'newExpiry',
      'expMonth',
    ])
      expect(member in nonParticipating).toBe(false);
    expect(nonParticipating.occurredAt).toBe('2026-11-21T05:01:02.123Z');

    const closed = eventOf(documentedV1Notification('au_card.closed'));
    expect([closed.cardId, closed.oldAccountNumber, 'newExpiry' in closed]).toEqual([
      TEST_CARD_ID,
      '510026******2002',
      false,
    ]);
    const advice = eventOf(documentedV1Notification('au_card.contact_cardholder_advice'));
    expect([advice.oldExpiry, 'newExpiry' in advice]).toEqual([{ month: 1, year: 2026 }, false]);
    for (const event of Object.keys(DOCUMENTED_V1_DETAILS)) {
      expect(eventOf(documentedV1Notification(event)).type).toBe(event);
    }
  });

  it('maps cmp_au_card.* to the same kinds with source card_management and 52-character card ids', () => {
    const cardId = CARD_INTERFACE_TEST_CARD_IDS['5100260000079200']!;
    expect(cardId).toHaveLength(52);
    for (const kind of [
      'updated',
      'expired',
      'closed',
      'non_participating',
      'contact_cardholder_advice',
      'unknown',
      'enrolled',
      'opt_out',
    ]) {
      const event = eventOf(notification({ event: `cmp_au_card.${kind}`, cardId }));
      expect([event.type, event.event, event.source, event.cardId]).toEqual([
        `au_card.${kind}`,
        `cmp_au_card.${kind}`,
        'card_management',
        cardId,
      ]);
    }
  });

  it('maps cmp_au_card.enrollment_failed with each documented reason code', () => {
    for (const reason of [
      'card-brand-not-supported',
      'declined',
      'internal-server-error',
      'validation-failed',
    ]) {
      const event = eventOf(
        notification({ event: 'cmp_au_card.enrollment_failed', details: { reason_code: reason } }),
      );
      expect([event.type, event.failureReason, event.source]).toEqual([
        'au_card.enrollment_failed',
        reason,
        'card_management',
      ]);
    }
    expect(CARD_EVENT_TYPES).toContain('au_card.enrollment_failed');
  });

  it('reads details sent as a JSON object as well as a JSON-encoded string', () => {
    const asObject = notification({ envelope: {} });
    asObject.details = JSON.parse(asObject.details as string);
    const fromString = eventOf(notification());
    expect({ ...eventOf(asObject), id: fromString.id, fingerprint: fromString.fingerprint }).toEqual(
      fromString,
    );
  });

  it('keeps an unknown event kind as type other with its wire name, and unknown members never matter', () => {
    const event = eventOf(
      notification({
        event: 'au_card.reissued',
        envelope: { surprise: { nested: [1, 2] } },
        details: { extra: 'x' },
      }),
    );
    expect([event.type, event.event, event.source, event.cardId]).toEqual([
      'other',
      'au_card.reissued',
      'account_updater',
      TEST_CARD_ID,
    ]);
    const foreign = eventOf(notification({ event: 'vault.something_new' }));
    expect([foreign.type, foreign.event, foreign.source]).toEqual([
      'other',
      'vault.something_new',
      'unknown',
    ]);
    expect(eventOf(notification({ event: 'au_card.valid' })).type).toBe('other');
  });

  it('reads timestamps with or without a zone (zone-less as UTC) and falls back to the receipt time', () => {
    const event = eventOf(
      notification({
        timestamp: '2024-12-12T09:59:44.667670',
        details: { occurred_at: '2024-12-12T09:59:44+0200' },
      }),
    );
    expect(event.timestamp).toBe('2024-12-12T09:59:44.667670Z');
    expect(Date.parse(event.timestamp)).toBe(Date.UTC(2024, 11, 12, 9, 59, 44, 667));
    expect(event.occurredAt).toBe('2024-12-12T09:59:44+02:00');
    const received = '2026-11-21T06:00:00.000Z';
    expect(
      eventOf(notification({ timestamp: 'yesterday', details: { occurred_at: undefined } }), received)
        .timestamp,
    ).toBe(received);
    expect(readTimestamp('2024-13-01T00:00:00Z')).toBeUndefined();
    expect(readTimestamp(1733997584)).toBeUndefined();
  });

  it('keeps free text of any length up to its bound, truncated and PAN-masked, never refused', () => {
    const event = eventOf(
      notification({
        envelope: {
          description: 'Network Token updated',
          summary: `PAN 4111111111111111 ${'x'.repeat(5000)}`,
          fingerprint: 'not-a-hash',
          grouping: 'new_grouping',
          occurrence: 42,
          scope: 'vault',
        },
      }),
    );
    expect(event.description).toBe('Network Token updated');
    expect(event.summary).toHaveLength(1024);
    expect(event.summary?.startsWith('PAN 411111******1111 x')).toBe(true);
    expect([event.fingerprint, event.grouping, event.occurrence]).toEqual(['not-a-hash', 'new_grouping', 42]);
  });

  it('leaves out members it cannot use instead of refusing the notification', () => {
    const event = eventOf(
      notification({
        details: {
          card_id: 'CRD-not/valid',
          new_account_number: 'not a number',
          old_account_number: '4111111111111111',
          new_expiration_date: '1329',
          exp_month: 13,
          exp_year: 123,
          created_at: 'soon',
        },
      }),
    );
    expect(event).not.toHaveProperty('cardId');
    expect(event).not.toHaveProperty('newAccountNumber');
    expect(event).not.toHaveProperty('newExpiry');
    expect(event).not.toHaveProperty('expMonth');
    expect(event).not.toHaveProperty('expYear');
    expect(event).not.toHaveProperty('createdAt');
    // A full PAN sent where a masked number belongs comes out masked.
    expect(event.oldAccountNumber).toBe('411111******1111');
    expect(JSON.stringify(event)).not.toContain('4111111111111111');
    const noDetails = eventOf(notification({ envelope: { details: 'not json' } }));
    expect(noDetails.cardId).toBeUndefined();
    expect(noDetails.type).toBe('au_card.updated');
  });

  it('normalises numeric and short expiry fields', () => {
    const event = eventOf(
      notification({
        details: { new_expiration_date: 1229, old_expiration_date: 129, exp_month: '07', exp_year: 29 },
      }),
    );
    expect([event.newExpiry, event.oldExpiry, event.expMonth, event.expYear]).toEqual([
      { month: 12, year: 2029 },
      { month: 1, year: 2029 },
      7,
      2029,
    ]);
  });

  it('cannot map a body that is not an object, names no vault or has no usable id', () => {
    for (const body of [null, [], 'au_card.updated', 42]) {
      expect(parseCardNotification(body)).toEqual({ ok: false, reason: 'not-an-object' });
    }
    expect(parseCardNotification(notification({ envelope: { tenant: undefined } }))).toEqual({
      ok: false,
      reason: 'no-tenant',
    });
    expect(parseCardNotification(notification({ envelope: { tenant: 'not a vault' } }))).toEqual({
      ok: false,
      reason: 'no-tenant',
    });
    expect(parseCardNotification(notification({ envelope: { id: undefined } }))).toEqual({
      ok: false,
      reason: 'no-id',
    });
    expect(parseCardNotification(notification({ envelope: { id: 'x'.repeat(200) } }))).toEqual({
      ok: false,
      reason: 'no-id',
    });
    // A card number is never taken as an id (it would be echoed); a UUID is kept exactly, even when
    // its digit groups happen to pass the Luhn check, so redeliveries are still recognised.
    expect(parseCardNotification(notification({ envelope: { id: '4111111111111111' } }))).toEqual({
      ok: false,
      reason: 'no-id',
    });
    const luhnLooking = '23048322-9859-4157-b529-772d14ede23a';
    expect(eventOf(notification({ envelope: { id: luhnLooking } })).id).toBe(luhnLooking);
  });
});
