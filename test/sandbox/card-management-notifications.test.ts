import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CARD_MANAGEMENT_NOTIFICATION_CARDS } from '../../src/sandbox/test-cards.ts';
import {
  assertNoTestPanIn,
  CARD_INTERFACE_TEST_CARD_IDS,
  type NotifyingSandbox,
  type Receiver,
  startNotifyingSandbox,
  verifiedBody,
} from '../support/fixtures.ts';

/**
 * Card management notifications of the embedded sandbox (issue 19; sandbox contract §8; provider-docs
 * examples.json, card-interface WEBHOOK): a documented test card created through the card interface
 * gets its fixed 52-character card id, and its account updater enrolment sends the table's signed
 * `cmp_au_card.*` notification with masked numbers only.
 */

const JSON_API = 'application/vnd.api+json';
const SECRETS = { tntsandbox1: 'whsec_cmp_secret_0123456789', tntsandbox2: 'whsec_cmp_other_0123456789' };

/** The documented table (examples.json `test_card_ids`, kept in the test support, not in the code under test). */
const DOCUMENTED_IDS = CARD_INTERFACE_TEST_CARD_IDS;

const EVENTS: Record<string, string> = {
  '5100260000079200': 'cmp_au_card.enrolled',
  '5100260000069201': 'cmp_au_card.updated',
  '5100260000059202': 'cmp_au_card.expired',
  '5100260000049203': 'cmp_au_card.closed',
  '5100260000039204': 'cmp_au_card.non_participating',
};

describe('card management notifications (documented wire)', () => {
  let t: NotifyingSandbox;
  let receiver: Receiver;
  let token1: string;
  let token2: string;
  beforeAll(async () => {
    t = await startNotifyingSandbox({ wire: 'documented', webhookDelayMs: 30 }, SECRETS);
    receiver = t.receivers.tntsandbox1;
    token1 = await t.token('tntsandbox1');
    token2 = await t.token('tntsandbox2');
  });
  afterAll(() => t.stop());

  const createCard = async (pan: string, token = token1) => {
    const response = await t.call('POST', '/card-interface/cards', {
      token,
      contentType: JSON_API,
      body: { data: { type: 'cards', attributes: { pan, exp_month: 7, exp_year: 31 } } },
    });
    expect(response.status).toBe(201);
    return response.body.data.id as string;
  };
  const subscribe = (id: string, token = token1) =>
    t.call('POST', `/card-interface/cards/${id}/card-update-subscriptions`, { token });

  it('knows exactly the documented test cards and ids', () => {
    expect(
      Object.fromEntries(
        Object.entries(CARD_MANAGEMENT_NOTIFICATION_CARDS).map(([pan, card]) => [pan, card.cardId]),
      ),
    ).toEqual(DOCUMENTED_IDS);
    for (const id of Object.values(DOCUMENTED_IDS)) expect(id).toHaveLength(52);
  });

  it.each(Object.entries(EVENTS))('%s: fixed card id, then a signed %s on enrolment', async (pan, event) => {
    const id = await createCard(pan);
    expect(id).toBe(DOCUMENTED_IDS[pan]);
    const read = await t.call('GET', `/card-interface/cards/${id}`, { token: token1 });
    expect(read.status).toBe(200);
    expect(read.body.data.id).toBe(id);
    // Creating the card alone sends nothing: the enrolment does.
    expect(receiver.matching((details) => details.card_id === id)).toEqual([]);

    const subscribed = await subscribe(id);
    expect(subscribed.status).toBe(200);
    expect(subscribed.body.data.attributes.state).toBe('enrolled');

    const request = await receiver.arrival((details) => details.card_id === id);
    expect(request.headers['content-type']).toBe('application/json');
    const body = verifiedBody(request, SECRETS.tntsandbox1);
    expect(Object.keys(body).sort()).toEqual([
      'description',
      'details',
      'event',
      'fingerprint',
      'grouping',
      'id',
      'integration_id',
      'occurrence',
      'org_id',
      'producer',
      'scope',
      'summary',
      'tenant',
      'timestamp',
    ]);
    expect(body.event).toBe(event);
    expect(body.tenant).toBe('tntsandbox1');
    expect(body.scope).toBe('cards');
    expect(body.producer).toEqual({ application_name: 'card-management', application_protocol: 'https' });
    expect(body.summary).toBe(`Card ${id} ${event}`);
    expect(typeof body.details).toBe('string');
    const details = JSON.parse(body.details) as Record<string, unknown>;
    const masked = `${pan.slice(0, 6)}******${pan.slice(-4)}`;
    const common = { card_id: id, card_first8: pan.slice(0, 8), occurred_at: details.occurred_at };
    expect(details.occurred_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(details).toEqual(
      {
        'cmp_au_card.enrolled': common,
        'cmp_au_card.updated': {
          ...common,
          old_account_number: masked,
          old_expiration_date: '0731',
          new_expiration_date: '0734',
        },
        'cmp_au_card.expired': {
          ...common,
          old_account_number: masked,
          old_expiration_date: '0731',
          new_expiration_date: '0734',
        },
        'cmp_au_card.closed': { ...common, old_account_number: masked },
        'cmp_au_card.non_participating': common,
      }[event],
    );
    assertNoTestPanIn(request.body.toString('utf8'));

    // Subscribing again answers the existing enrolment and sends nothing more: a failing enrolment
    // made afterwards, notifying after the same delay, is the barrier.
    expect((await subscribe(id)).body.data.attributes.state).toBe('enrolled');
    const barrier = await createCard('5100260000994002');
    expect((await subscribe(barrier)).body.data.attributes.state).toBe('failed');
    await receiver.arrival((details) => details.card_id === barrier);
    expect(receiver.matching((details) => details.card_id === id)).toHaveLength(1);
  });

  it('a failed enrolment (4002) sends cmp_au_card.enrollment_failed with reason code validation-failed', async () => {
    for (const [pan, first8] of [
      ['5100260000994002', '51002600'],
      ['4000210000494002', '40002100'],
    ] as const) {
      const id = await createCard(pan);
      expect(id).toMatch(/^CRD[0-9A-Za-z]{49}$/);
      const subscribed = await subscribe(id);
      expect(subscribed.body.data.attributes.state).toBe('failed');
      const request = await receiver.arrival((details) => details.card_id === id);
      const body = verifiedBody(request, SECRETS.tntsandbox1);
      expect(body.event).toBe('cmp_au_card.enrollment_failed');
      const details = JSON.parse(body.details) as Record<string, unknown>;
      expect(details).toEqual({
        card_id: id,
        card_first8: first8,
        occurred_at: details.occurred_at,
        reason_code: 'validation-failed',
      });
      assertNoTestPanIn(request.body.toString('utf8'));
    }
  });

  it('sends card_first8 only for Visa and Mastercard cards', async () => {
    // An American Express card failing enrolment (4002 scenario by last four digits).
    const amex = '378200000004002';
    const id = await createCard(amex);
    expect((await subscribe(id)).body.data.attributes.state).toBe('failed');
    const request = await receiver.arrival((details) => details.card_id === id);
    const details = JSON.parse(verifiedBody(request, SECRETS.tntsandbox1).details) as Record<string, unknown>;
    expect(Object.keys(details).sort()).toEqual(['card_id', 'occurred_at', 'reason_code']);
  });

  it('gives each vault the fixed id; a second card of the PAN in one vault gets a fresh id', async () => {
    const pan = '5100260000069201';
    const fixed = DOCUMENTED_IDS[pan]!;
    // The first test of this file created it in tntsandbox1; tntsandbox2 gets the same fixed id.
    const other = await createCard(pan, token2);
    expect(other).toBe(fixed);
    const again = await createCard(pan);
    expect(again).not.toBe(fixed);
    expect(again).toMatch(/^CRD[0-9A-Za-z]{49}$/);
    // The vaults' cards are distinct: tntsandbox2's enrolment notifies tntsandbox2 only.
    expect((await subscribe(fixed, token2)).status).toBe(200);
    const request = await t.receivers.tntsandbox2.arrival((details) => details.card_id === fixed);
    const body = verifiedBody(request, SECRETS.tntsandbox2);
    expect(body.tenant).toBe('tntsandbox2');
    expect(body.event).toBe('cmp_au_card.updated');
    expect(receiver.matching((d) => d.card_id === fixed)).toHaveLength(1);
  });
});

describe('card management notifications (specification wire)', () => {
  let t: NotifyingSandbox;
  beforeAll(async () => {
    t = await startNotifyingSandbox({ wire: 'specification', webhookDelayMs: 30 }, SECRETS);
  });
  afterAll(() => t.stop());

  it('keeps 25-character ids and sends no card management notification', async () => {
    const token = await t.token('tntsandbox1');
    const created = await t.call('POST', '/card-interface/cards', {
      token,
      contentType: JSON_API,
      body: { data: { type: 'cards', attributes: { pan: '5100260000069201', exp_month: 7, exp_year: 31 } } },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect(id).toMatch(/^CRD[0-9A-Za-z]{22}$/);
    expect(
      (await t.call('POST', `/card-interface/cards/${id}/card-update-subscriptions`, { token })).status,
    ).toBe(200);
    // A v1 enrolment notifying after the same delay, scheduled later, is the barrier.
    const enrolled = await t.call('POST', '/account-updater/cards', {
      token,
      body: { name: 'Ada', number: '5100260000692002', exp_month: 6, exp_year: 30 },
    });
    expect(enrolled.status).toBe(201);
    const v1Id = enrolled.body.data.id as string;
    await t.receivers.tntsandbox1.arrival((details) => details.card_id === v1Id);
    expect(t.receivers.tntsandbox1.matching((details) => details.card_id === id)).toEqual([]);
  });
});
