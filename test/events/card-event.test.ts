import { describe, expect, it } from 'vitest';
import { CARD_EVENT_TYPES, parseCardNotification } from '../../src/events/card-event.ts';
import { notification, TEST_CARD_ID } from '../support/fixtures.ts';

function issuesOf(body: unknown) {
  const result = parseCardNotification(body);
  if (result.ok) throw new Error('expected the notification to be refused');
  return result.issues;
}

describe('parseCardNotification', () => {
  it('maps a valid notification to a frozen CardEvent', () => {
    const body = notification();
    const result = parseCardNotification(body);
    expect(result).toEqual({
      ok: true,
      event: {
        id: body.id,
        type: 'au_card.updated',
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
      },
    });
    if (!result.ok) return;
    expect(Object.isFrozen(result.event)).toBe(true);
    expect(Object.isFrozen(result.event.newExpiry)).toBe(true);
  });

  it('accepts every notification kind of the specification and refuses au_card.valid (13 characters)', () => {
    for (const type of CARD_EVENT_TYPES) {
      expect(type.length).toBeGreaterThanOrEqual(14);
      expect(type.length).toBeLessThanOrEqual(33);
      expect(parseCardNotification(notification({ event: type })).ok).toBe(true);
    }
    expect(issuesOf(notification({ event: 'au_card.valid' }))).toEqual([
      { path: '/event', message: `event must be one of ${CARD_EVENT_TYPES.join(', ')}` },
    ]);
  });

  it('leaves out optional members that are absent or null', () => {
    const result = parseCardNotification(
      notification({
        envelope: { description: undefined, summary: null, producer: undefined },
        details: { occurred_at: null },
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect('description' in result.event).toBe(false);
    expect('summary' in result.event).toBe(false);
    expect('occurredAt' in result.event).toBe(false);
  });

  it('normalises numeric and short expiry fields', () => {
    const result = parseCardNotification(
      notification({
        details: { new_expiration_date: 1229, old_expiration_date: 129, exp_month: '07', exp_year: 29 },
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.event.newExpiry).toEqual({ month: 12, year: 2029 });
    expect(result.event.oldExpiry).toEqual({ month: 1, year: 2029 });
    expect(result.event.expMonth).toBe(7);
    expect(result.event.expYear).toBe(2029);
  });

  it('reports a missing member as required', () => {
    expect(issuesOf(notification({ envelope: { fingerprint: undefined } }))).toEqual([
      { path: '/fingerprint', message: 'fingerprint is required' },
    ]);
    expect(issuesOf(notification({ details: { card_id: undefined } }))).toEqual([
      { path: '/details/card_id', message: 'details.card_id is required' },
    ]);
    expect(issuesOf(notification({ envelope: { details: undefined } }))).toEqual([
      { path: '/details', message: 'details is required' },
    ]);
  });

  it('reports wrong lengths and shapes with their pointer', () => {
    expect(
      issuesOf(
        notification({
          envelope: {
            id: '1234',
            description: 'Card account updater event sen',
            timestamp: '2026-11-21T05:01:03Z',
            fingerprint: 'A'.repeat(64),
            grouping: 'sometimes',
            integration_id: 'short',
            occurrence: 10,
            org_id: 'ACsandbox',
            scope: 'card',
            tenant: 'tntsandbox10',
            producer: { application_protocol: 'tcp' },
          },
          details: {
            card_id: 'XYZabcdefghijklmnopqrstuv',
            occurred_at: 'yesterday',
            new_expiration_date: '1329',
            old_expiration_date: '12/29',
            exp_month: 13,
            exp_year: 123,
            created_at: '2026-11-21T05:01:02.000Z',
          },
        }),
      ).map((issue) => issue.path),
    ).toEqual([
      '/id',
      '/timestamp',
      '/description',
      '/details/card_id',
      '/details/occurred_at',
      '/details/new_expiration_date',
      '/details/old_expiration_date',
      '/details/exp_month',
      '/details/exp_year',
      '/details/created_at',
      '/fingerprint',
      '/grouping',
      '/integration_id',
      '/occurrence',
      '/org_id',
      '/producer/application_protocol',
      '/scope',
      '/tenant',
    ]);
    expect(issuesOf(notification({ envelope: { description: 'too short' } }))).toEqual([
      { path: '/description', message: 'description must be a string of exactly 31 characters' },
    ]);
  });

  it('refuses details that are not a JSON object string without quoting them', () => {
    for (const rawDetails of ['{"card_id": 4111111111111111', '[1,2]', '"text"']) {
      expect(issuesOf(notification({ rawDetails }))).toEqual([
        { path: '/details', message: 'details must be a JSON-encoded object string' },
      ]);
    }
    expect(issuesOf(notification({ envelope: { details: { card_id: TEST_CARD_ID } } }))).toEqual([
      { path: '/details', message: 'details must be a JSON-encoded object string' },
    ]);
  });

  it('refuses unmasked or under-masked account numbers and never echoes them', () => {
    const values = [
      '5100260000391001', // all digits
      '5100260*00391001', // a digit in the masked middle
      '510026******10011', // 17 characters
      '510026-*****1001', // not a mask character
    ];
    for (const value of values) {
      const issues = issuesOf(
        notification({ details: { new_account_number: value, old_account_number: value } }),
      );
      expect(issues).toEqual([
        {
          path: '/details/new_account_number',
          message:
            'details.new_account_number must be a masked account number of 16 characters showing at most the first six and last four digits',
        },
        {
          path: '/details/old_account_number',
          message:
            'details.old_account_number must be a masked account number of 16 characters showing at most the first six and last four digits',
        },
      ]);
      expect(JSON.stringify(issues)).not.toContain(value);
      expect(JSON.stringify(issues)).not.toContain('0039');
    }
    expect(
      parseCardNotification(notification({ details: { old_account_number: '****************' } })).ok,
    ).toBe(true);
  });

  it('refuses a body that is not an object', () => {
    for (const body of [null, 42, 'text', [1]]) {
      expect(issuesOf(body)).toEqual([{ path: '', message: 'the notification must be a JSON object' }]);
    }
  });
});
