import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import { TimerSet } from '../../src/sandbox/timers.ts';
import { buildNotification, WebhookDispatcher } from '../../src/sandbox/webhooks.ts';
import {
  DOCUMENTED_V1_DETAILS,
  NOTIFICATION_DETAILS_MEMBERS,
  NOTIFICATION_ENVELOPE_MEMBERS,
  type NotifyingSandbox,
  type ReceivedRequest,
  type Receiver,
  SANDBOX_WIRE_UNDER_TEST,
  startNotifyingSandbox,
  startReceiver,
  startSandbox,
  type TestSandbox,
  verifiedBody,
  WAIT,
} from '../support/fixtures.ts';

const SECRET = 'whsec_test_secret_0123456789';

const verified = (request: ReceivedRequest, secret = SECRET) => verifiedBody(request, secret);

describe('notification body (spec notification table, gap decisions)', () => {
  it('sends the documented per-event subset of details members by default (sandbox contract §8)', () => {
    const input = {
      vault: 'tntsandbox1',
      cardId: 'CRDabcdefghijklmnopqrstuv',
      oldPan: '5100260000692002',
      newPan: '5100261234567890',
      oldExpMonth: 3,
      oldExpYear: 29,
      newExpMonth: 4,
      newExpYear: 31,
      createdAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
      occurredAtMs: Date.UTC(2026, 0, 2, 3, 4, 6, 789),
    };
    const detailsOf = (event: string) =>
      JSON.parse(buildNotification({ ...input, event }).envelope.details as string) as Record<
        string,
        unknown
      >;
    expect(detailsOf('au_card.updated')).toEqual({
      card_id: 'CRDabcdefghijklmnopqrstuv',
      old_account_number: '510026******2002',
      old_expiration_date: '0329',
      new_expiration_date: '0431',
      occurred_at: '2026-01-02T03:04:06.789Z',
    });
    expect(Object.keys(detailsOf('au_card.expired')).sort()).toEqual(
      Object.keys(detailsOf('au_card.updated')).sort(),
    );
    expect(Object.keys(detailsOf('au_card.closed'))).toEqual([
      'card_id',
      'old_account_number',
      'occurred_at',
    ]);
    expect(Object.keys(detailsOf('au_card.non_participating'))).toEqual(['card_id', 'occurred_at']);
    expect(Object.keys(detailsOf('au_card.contact_cardholder_advice'))).toEqual([
      'card_id',
      'old_account_number',
      'old_expiration_date',
      'occurred_at',
    ]);
    expect(Object.keys(detailsOf('au_card.enrolled'))).toEqual(['card_id', 'occurred_at']);
  });

  it('has every field at the lengths of the specification on the specification wire', () => {
    const { envelope, body } = buildNotification(
      {
        vault: 'tntsandbox1',
        event: 'au_card.contact_cardholder_advice',
        cardId: 'CRDabcdefghijklmnopqrstuv',
        oldPan: '5100260000692002',
        newPan: '5100261234567890',
        oldExpMonth: 3,
        oldExpYear: 29,
        newExpMonth: 3,
        newExpYear: 29,
        createdAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
        occurredAtMs: Date.UTC(2026, 0, 2, 3, 4, 6, 789),
      },
      'specification',
    );
    const parsed = JSON.parse(body);
    expect(parsed).toEqual(envelope);
    expect(Object.keys(parsed).sort()).toEqual([...NOTIFICATION_ENVELOPE_MEMBERS].sort());
    expect(parsed.description).toHaveLength(31);
    expect(parsed.description).toBe('Card account updater event sent');
    expect(parsed.event.length).toBeGreaterThanOrEqual(14);
    expect(parsed.event.length).toBeLessThanOrEqual(33);
    expect(parsed.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(['exp_repeat', 'every_single', 'high_rate']).toContain(parsed.grouping);
    expect(parsed.grouping.length).toBeGreaterThanOrEqual(9);
    expect(parsed.grouping.length).toBeLessThanOrEqual(12);
    expect(parsed.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parsed.integration_id).toMatch(/^[0-9A-Za-z]{24}$/);
    expect(parsed.occurrence).toBe(1);
    expect(String(parsed.occurrence)).toHaveLength(1);
    expect(parsed.org_id).toBe('ACsandbox000000000000001');
    expect(parsed.org_id).toHaveLength(24);
    expect(parsed.producer).toEqual({ application_name: 'account-updater', application_protocol: 'https' });
    expect(parsed.producer.application_protocol.length).toBeGreaterThanOrEqual(4);
    expect(parsed.producer.application_protocol.length).toBeLessThanOrEqual(5);
    expect(parsed.scope).toBe('cards');
    expect(parsed.scope).toHaveLength(5);
    expect(parsed.summary).toBe('Card CRDabcdefghijklmnopqrstuv au_card.contact_cardholder_advice');
    expect(parsed.tenant).toHaveLength(11);
    expect(parsed.timestamp).toBe('2026-01-02T03:04:06.789Z');
    expect(parsed.timestamp.length).toBeGreaterThanOrEqual(24);
    expect(parsed.timestamp.length).toBeLessThanOrEqual(26);

    expect(typeof parsed.details).toBe('string');
    const details = JSON.parse(parsed.details);
    expect(Object.keys(details).sort()).toEqual([...NOTIFICATION_DETAILS_MEMBERS].sort());
    expect(details.card_id).toHaveLength(25);
    expect(details.occurred_at).toBe('2026-01-02T03:04:06.789Z');
    expect(details.occurred_at.length).toBeGreaterThanOrEqual(24);
    expect(details.occurred_at.length).toBeLessThanOrEqual(26);
    expect(details.new_account_number).toBe('510026******7890');
    expect(details.old_account_number).toBe('510026******2002');
    expect(details.new_account_number).toHaveLength(16);
    expect(details.old_account_number).toHaveLength(16);
    expect(details.new_expiration_date).toBe('0329');
    expect(details.old_expiration_date).toBe('0329');
    expect(String(details.exp_month).length).toBeGreaterThanOrEqual(1);
    expect(String(details.exp_month).length).toBeLessThanOrEqual(2);
    expect(details.exp_month).toBe(3);
    expect(details.exp_year).toBe(2029);
    expect(String(details.exp_year).length).toBeGreaterThanOrEqual(2);
    expect(String(details.exp_year).length).toBeLessThanOrEqual(4);
    expect(details.created_at).toBe('2026-01-02T03:04:05Z');
    expect(details.created_at).toHaveLength(20);

    expect(parsed.fingerprint).toBe(
      createHash('sha256').update(`${parsed.event}${parsed.details}${parsed.tenant}`).digest('hex'),
    );
    expect(body).not.toContain('5100260000692002');
    expect(body).not.toContain('5100261234567890');
  });

  it('masks a 19-digit PAN to 16 characters and uses a fixed integration_id per vault', () => {
    const input = {
      vault: 'tntsandbox2',
      event: 'au_card.closed',
      cardId: 'CRDabcdefghijklmnopqrstuv',
      oldPan: '4000210000000000006',
      newPan: '4000210000000000006',
      oldExpMonth: 12,
      oldExpYear: 2031,
      newExpMonth: 12,
      newExpYear: 2031,
      createdAtMs: 0,
      occurredAtMs: 0,
    };
    const a = buildNotification(input, 'specification').envelope;
    const b = buildNotification(input, 'specification').envelope;
    expect(a.id).not.toBe(b.id);
    expect(a.integration_id).toBe(b.integration_id);
    expect(a.integration_id).not.toBe(
      buildNotification({ ...input, vault: 'tntsandbox1' }).envelope.integration_id,
    );
    const details = JSON.parse(a.details as string);
    expect(details.old_account_number).toBe('400021******0006');
    expect(details.new_expiration_date).toBe('1231');
    expect(details.exp_year).toBe(2031);
  });
});

describe('enrolment notifications over HTTP', () => {
  let t: NotifyingSandbox;
  let receiver: Receiver;
  let otherVault: Receiver;

  beforeAll(async () => {
    t = await startNotifyingSandbox(
      { webhookDelayMs: 20, retryScheduleMs: [0, 50, 100] },
      { tntsandbox1: SECRET, tntsandbox2: 'another_secret_0123456789' },
    );
    ({ tntsandbox1: receiver, tntsandbox2: otherVault } = t.receivers);
  });
  afterAll(() => t.stop());

  const enrol = (pan: string) => t.enrol('tntsandbox1', pan);

  const notificationFor = (cardId: string) => receiver.arrival((details) => details.card_id === cardId);

  const WEBHOOK_CARDS = SANDBOX_TEST_CARDS.filter((c) => c.table === 'enrolment-webhook');
  it.each(WEBHOOK_CARDS.map((c) => [c.scenario, c.pan, c.outcome] as const))(
    'scenario %s (%s) sends a signed %s notification',
    async (scenario, pan, event) => {
      const cardId = await enrol(pan);
      const request = await notificationFor(cardId);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['user-agent']).toBe('cardgraph-sandbox');
      const body = verified(request);
      expect(body.event).toBe(event);
      expect(body.tenant).toBe('tntsandbox1');
      expect(body.summary).toBe(`Card ${cardId} ${event}`);
      const details = JSON.parse(body.details);
      expect(details.card_id).toBe(cardId);
      if (SANDBOX_WIRE_UNDER_TEST === 'specification') {
        expect(details.old_account_number).toBe(`${pan.slice(0, 6)}******${pan.slice(-4)}`);
        if (scenario === '2002') expect(details.new_account_number).not.toBe(details.old_account_number);
        else expect(details.new_account_number).toBe(details.old_account_number);
        expect(details.old_expiration_date).toBe('0630');
        expect(details.exp_year).toBe(2030);
      } else {
        // The documented per-event subset (sandbox contract §8).
        const members = DOCUMENTED_V1_DETAILS[event] ?? ['card_id', 'occurred_at'];
        expect(Object.keys(details).sort()).toEqual([...members].sort());
        if ('old_account_number' in details)
          expect(details.old_account_number).toBe(`${pan.slice(0, 6)}******${pan.slice(-4)}`);
        if ('old_expiration_date' in details) expect(details.old_expiration_date).toBe('0630');
      }
      expect(request.body.toString()).not.toContain(pan);
    },
  );

  it('a normal card sends au_card.enrolled; 1xxx cards send nothing; other vaults get nothing', async () => {
    const cardId = await enrol('4111111111111111');
    const body = verified(await notificationFor(cardId));
    expect(body.event).toBe('au_card.enrolled');
    const before = receiver.received.length;
    await enrol('5100260000291003');
    // Quiet window: a notification would follow the enrolment after the sandbox's webhook delay;
    // nothing announces that none was sent, so the test looks 100 ms later.
    await sleep(100);
    expect(receiver.received.length).toBe(before);
    expect(otherVault.received).toHaveLength(0);
    const listing = await t.call('GET', '/sandbox/webhook-deliveries');
    expect(listing.status).toBe(200);
    expect(listing.body.data.length).toBe(t.sandbox.deliveries().length);
    expect(listing.body.data.every((d: { outcome: string }) => d.outcome === 'delivered')).toBe(true);
  });
});

describe('delivery retries (contract §4)', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startSandbox({ webhookDelayMs: 10, retryScheduleMs: [0, 50, 100], deliveryTimeoutMs: 200 });
  });
  afterAll(() => t.stop());

  /**
   * Registers a receiver in `vault` that answers the n-th request (from 1) with `status(n)`, enrols
   * webhook test card `pan` there and waits until one delivery to it has `outcome`.
   * @returns the receiver (the caller closes it) and the delivery records of its endpoint.
   */
  async function deliverUntil(
    vault: Parameters<TestSandbox['enrol']>[0],
    pan: string,
    status: (n: number) => number,
    outcome: string,
  ) {
    const receiver = await startReceiver(status);
    const { id: endpointId } = t.sandbox.registerWebhookEndpoint(vault, {
      url: receiver.url,
      secret: SECRET,
    });
    await t.enrol(vault, pan);
    const records = await vi.waitFor(() => {
      const mine = t.sandbox.deliveries().filter((d) => d.endpointId === endpointId);
      expect(mine.map((d) => d.outcome)).toContain(outcome);
      return mine;
    }, WAIT);
    return { receiver, records };
  }

  it('re-sends the same id until a 2xx: fails twice, then delivered', async () => {
    const { receiver, records } = await deliverUntil(
      'tntsandbox1',
      '4000210000692001',
      (n) => (n <= 2 ? 503 : 204),
      'delivered',
    );
    expect(records.map((r) => [r.attempt, r.status, r.outcome])).toEqual([
      [1, 503, 'retrying'],
      [2, 503, 'retrying'],
      [3, 204, 'delivered'],
    ]);
    expect(new Set(records.map((r) => r.notificationId)).size).toBe(1);
    expect(records.every((r) => r.vault === 'tntsandbox1' && r.event === 'au_card.enrolled')).toBe(true);
    expect(receiver.received).toHaveLength(3);
    const ids = receiver.received.map((r) => verified(r).id);
    expect(ids).toEqual([records[0]!.notificationId, records[0]!.notificationId, records[0]!.notificationId]);
    expect(new Set(receiver.received.map((r) => r.body.toString())).size).toBe(1);
    await receiver.close();
  });

  it('records a delivery that never gets a 2xx as failed after the last attempt', async () => {
    const { receiver, records } = await deliverUntil('tntsandbox2', '4000210000192002', () => 500, 'failed');
    expect(records.map((r) => [r.attempt, r.status, r.outcome])).toEqual([
      [1, 500, 'retrying'],
      [2, 500, 'retrying'],
      [3, 500, 'failed'],
    ]);
    expect(records[0]!.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(receiver.received).toHaveLength(3);
    await receiver.close();
  });

  it('records transport errors and timeouts', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const dispatcher = new WebhookDispatcher({
      logger: createLogger({ name: 'sandbox', level: 'silent' }),
      timers: new TimerSet(),
      retryScheduleMs: [0],
      deliveryTimeoutMs: 100,
    });
    const hanging = dispatcher.register('tntsandbox1', { url: `http://127.0.0.1:${port}/`, secret: SECRET });
    const closed = await startReceiver();
    await closed.close();
    const refused = dispatcher.register('tntsandbox1', { url: closed.url, secret: SECRET });
    dispatcher.notify({
      vault: 'tntsandbox1',
      event: 'au_card.enrolled',
      cardId: 'CRDabcdefghijklmnopqrstuv',
      oldPan: '4111111111111111',
      newPan: '4111111111111111',
      oldExpMonth: 1,
      oldExpYear: 30,
      newExpMonth: 1,
      newExpYear: 30,
      createdAtMs: Date.now(),
      occurredAtMs: Date.now(),
    });
    const records = await vi.waitFor(() => {
      expect(dispatcher.deliveries()).toHaveLength(2);
      return dispatcher.deliveries();
    }, WAIT);
    const byEndpoint = Object.fromEntries(records.map((r) => [r.endpointId, r]));
    expect(byEndpoint[hanging.id]).toMatchObject({ attempt: 1, error: 'TimeoutError', outcome: 'failed' });
    expect(byEndpoint[refused.id]).toMatchObject({ attempt: 1, error: 'ECONNREFUSED', outcome: 'failed' });
    dispatcher.stop();
    silent.closeAllConnections();
    silent.close();
  });

  it('stop() cancels pending retries and pending enrolments at once', async () => {
    const local = await startSandbox({ webhookDelayMs: 10, retryScheduleMs: [0, 60_000] });
    const receiver = await startReceiver(() => 500);
    local.sandbox.registerWebhookEndpoint('tntsandbox1', { url: receiver.url, secret: SECRET });
    const token = await local.token('tntsandbox1');
    await local.call('POST', '/account-updater/cards', {
      token,
      body: { name: 'Ada', number: '4000210000692001', exp_month: 6, exp_year: 30 },
    });
    await expect.poll(() => local.sandbox.deliveries(), WAIT).toHaveLength(1);
    const started = Date.now();
    await local.stop();
    await local.stop();
    expect(Date.now() - started).toBeLessThan(500);
    expect(local.sandbox.deliveries()).toHaveLength(1);
    expect(local.sandbox.deliveries()[0]!.outcome).toBe('retrying');
    await receiver.close();
  });
});
