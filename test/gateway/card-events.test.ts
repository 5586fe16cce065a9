import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { print } from 'graphql';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import { graphql } from '../generated/index.ts';
import { EnrolCard } from '../support/documents.ts';
import {
  assertNoTestPanIn,
  collect,
  notification,
  SANDBOX_WIRE_UNDER_TEST,
  type Stack,
  startStack,
  TEST_WEBHOOK_SECRET,
  useStack,
  waitForSubscribers,
} from '../support/fixtures.ts';

const CardEvents = graphql(`
  subscription CE_CardEvents($cardId: String, $types: [CardEventType!], $vaultId: String) {
    cardEvents(cardId: $cardId, types: $types, vaultId: $vaultId) {
      id
      type
      tenant
      cardId
      timestamp
      createdAt
      oldAccountNumber
      newAccountNumber
      oldExpiry { month year }
      newExpiry { month year }
      card {
        __typename
        ... on CardEventCardSuccess { data { cardId vaultId state event capabilities } }
        ... on Error { code }
      }
    }
  }
`);

/** Vault 2 registers two merchants, so its enrolments name one (gap decisions, merchants). */
const VAULT2_MERCHANT = { serviceMerchantId: 'SMsandbox2merchant00001', subMerchantName: 'Corner Shop' };

async function enrol(
  stack: Stack,
  token: string,
  number: string,
  merchant?: typeof VAULT2_MERCHANT,
): Promise<string> {
  const input = {
    name: 'Ada Lovelace',
    number,
    expMonth: 12,
    expYear: 30,
    ...(merchant ? { merchant } : {}),
  };
  const result = await stack.execute(EnrolCard, { input }, token);
  const payload = result.data?.enrollAccountUpdaterCard;
  if (payload?.__typename !== 'MutationEnrollAccountUpdaterCardSuccess')
    throw new Error(`enrolment failed: ${JSON.stringify(result)}`);
  return payload.data.cardId;
}

async function postWebhook(stack: Stack, body: string, signature: string | undefined) {
  const response = await request(`${stack.url}/webhooks/card-events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signature ? { 'vgs-signature': signature } : {}) },
    body,
  });
  return {
    status: response.statusCode,
    body: (await response.body.json()) as { errors?: { code: string }[]; data?: unknown },
  };
}

describe('cardEvents subscription', () => {
  const t = useStack({ SANDBOX_WEBHOOK_DELAY_MS: '150' });

  afterEach(async () => {
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 0);
    await waitForSubscribers(t.stack.app, 'tntsandbox2', 0);
  });

  it('streams the webhook of an enrolment (2002, updated) over graphql-ws, masked, to its vault only', async () => {
    const vault1 = collect(t.stack.wsClient(t.vault1Token), CardEvents, {}, 1);
    const vault2 = collect(t.stack.wsClient(t.vault2Token), CardEvents, {}, 1, 1_500);
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 1);
    await waitForSubscribers(t.stack.app, 'tntsandbox2', 1);

    const cardId = await enrol(t.stack, t.vault1Token, '4000210000192002');
    const [event] = await vault1;
    expect(event?.errors).toBeUndefined();
    const data = event?.data?.cardEvents;
    expect(data).toMatchObject({
      type: 'UPDATED',
      tenant: 'tntsandbox1',
      cardId,
      card: { __typename: 'CardNotFoundError', code: 'card-not-found' },
    });
    expect(data?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(data?.oldAccountNumber).toMatch(/^400021\*{6}2002$/);
    expect(data?.oldExpiry).toEqual({ month: 12, year: 2030 });
    if (SANDBOX_WIRE_UNDER_TEST === 'specification') {
      expect(data?.newAccountNumber).toMatch(/^400021\*{6}\d{4}$/);
    } else {
      // The documented au_card.updated details carry no new account number (sandbox contract §8).
      expect(data?.newAccountNumber).toBeNull();
      expect(data?.createdAt).toBeNull();
      expect(data?.newExpiry).toEqual({ month: 12, year: 2030 });
    }
    expect(await vault2).toEqual([]);
  });

  it('resolves the card of a normal enrolment once per event for every subscriber', async () => {
    const clients = [
      t.stack.wsClient(t.vault1Token),
      t.stack.wsClient(t.vault1Token),
      t.stack.wsClient(t.vault1Token),
    ];
    const results = clients.map((client) => collect(client, CardEvents, { types: ['ENROLLED'] }, 1));
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 3);

    const cardId = await enrol(t.stack, t.vault1Token, '4111111111111111');
    const events = await Promise.all(results);
    for (const [event] of events) {
      expect(event?.data?.cardEvents).toMatchObject({
        type: 'ENROLLED',
        cardId,
        card: {
          __typename: 'CardEventCardSuccess',
          data: {
            cardId,
            vaultId: 'tntsandbox1',
            state: 'ENROLLED',
            event: 'ENROLLED',
            capabilities: ['ACCOUNT_UPDATER'],
          },
        },
      });
    }
    const reads = t.stack
      .sandbox!.requests()
      .filter((r) => r.method === 'GET' && r.path.endsWith(`/cards/${cardId}`));
    expect(reads).toHaveLength(1);
  });

  it('filters by cardId and by event type', async () => {
    const client = t.stack.wsClient(t.vault1Token);
    const closedOnly = collect(client, CardEvents, { types: ['CLOSED'] }, 1);
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 1);
    await enrol(t.stack, t.vault1Token, '4000210000692001'); // au_card.enrolled: filtered out
    const closedCard = await enrol(t.stack, t.vault1Token, '4000210000092004'); // au_card.closed
    const [event] = await closedOnly;
    expect(event?.data?.cardEvents).toMatchObject({ type: 'CLOSED', cardId: closedCard });

    await waitForSubscribers(t.stack.app, 'tntsandbox1', 0);
    const byCard = collect(client, CardEvents, { cardId: 'CRD0000000000000000000000' }, 1, 800);
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 1);
    await enrol(t.stack, t.vault1Token, '4000210000592003');
    expect(await byCard).toEqual([]);
  });

  it('delivers over SSE (text/event-stream)', async () => {
    const response = await request(`${t.stack.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${t.vault2Token}`,
      },
      body: JSON.stringify({ query: print(CardEvents), variables: {} }),
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/event-stream');
    await waitForSubscribers(t.stack.app, 'tntsandbox2', 1);
    const cardId = await enrol(t.stack, t.vault2Token, '5100260000992006', VAULT2_MERCHANT);
    let text = '';
    for await (const chunk of response.body) {
      text += chunk.toString();
      if (text.includes('"cardEvents"')) break;
    }
    response.body.destroy();
    const line = text.split('\n').find((l) => l.startsWith('data:') && l.includes('cardEvents'));
    const payload = JSON.parse(line!.slice(5)) as {
      data: { cardEvents: { type: string; tenant: string; cardId: string } };
    };
    expect(payload.data.cardEvents).toMatchObject({ type: 'UNKNOWN', tenant: 'tntsandbox2', cardId });
  });

  it('keeps a connection whose token is valid for longer than the longest timer delay (30 days)', async () => {
    const token = await t.stack.token({ vaults: ['tntsandbox1'], expiresInS: 30 * 86_400 });
    const client = t.stack.wsClient(token);
    let closedWith: number | undefined;
    client.on('closed', (event) => {
      closedWith = (event as { code: number }).code;
    });
    const events = collect(client, CardEvents, {}, 1, 3_000);
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 1);
    // Quiet window: an overflowing timer (delay beyond 2^31-1 ms) would fire at once and close the
    // socket; nothing announces that a close did not happen, so the test looks 200 ms later.
    await sleep(200);
    expect(closedWith).toBeUndefined();
    const cardId = await enrol(t.stack, token, '4000210000092004');
    expect((await events)[0]?.data?.cardEvents).toMatchObject({ type: 'CLOSED', cardId });
  });

  it('closes graphql-ws connections without a valid token with 4403 at connection_init', async () => {
    for (const token of ['not-a-jwt', null]) {
      const closed = new Promise<number>((resolve) => {
        const client = t.stack.wsClient(token);
        client.on('closed', (event) => resolve((event as { code: number }).code));
        void collect(client, CardEvents, {}, 1, 1_000).catch(() => undefined);
      });
      expect(await closed).toBe(4403);
    }
    // The operator sees each refusal (info), never the token.
    const log = readFileSync(t.stack.logFile, 'utf8');
    const refusals = log
      .split('\n')
      .filter((line) => line.includes('graphql-ws connection refused'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; code?: string });
    expect(refusals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: 30,
          msg: 'graphql-ws connection refused (4403): bad client token',
          code: 'invalid-token',
        }),
        expect.objectContaining({
          level: 30,
          msg: 'graphql-ws connection refused (4403): no token in connectionParams.authorization',
        }),
      ]),
    );
    expect(log).not.toContain('not-a-jwt');
  });
});

describe('webhook receiver on the gateway', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack();
    token = await stack.token({ vaults: ['tntsandbox1'] });
  });
  afterAll(() => stack.stop());

  it('accepts a signed notification, refuses bad signatures, stale timestamps and bodies that are not JSON, keeps an unmappable one aside, publishing only the valid one', async () => {
    const received = collect(stack.wsClient(token), CardEvents, {}, 2, 1_500);
    await waitForSubscribers(stack.app, 'tntsandbox1', 1);
    const now = Math.floor(Date.now() / 1000);

    const bad = JSON.stringify(notification());
    expect(
      await postWebhook(stack, bad, signWebhookBody(bad, 'whsec_wrong_secret_0000000000', now)),
    ).toMatchObject({
      status: 401,
      body: { errors: [{ code: 'bad-signature' }] },
    });
    const stale = JSON.stringify(notification());
    expect(
      await postWebhook(stack, stale, signWebhookBody(stale, TEST_WEBHOOK_SECRET, now - 301)),
    ).toMatchObject({
      status: 401,
      body: { errors: [{ code: 'stale-timestamp' }] },
    });
    expect(await postWebhook(stack, stale, undefined)).toMatchObject({
      status: 401,
      body: { errors: [{ code: 'missing-signature' }] },
    });
    // Signed but naming no vault: acknowledged and stored for operators, never published.
    const unmappable = notification({ tenant: 'short', details: { new_account_number: '4000210000192002' } });
    const unmappableBody = JSON.stringify(unmappable);
    const kept = await postWebhook(
      stack,
      unmappableBody,
      signWebhookBody(unmappableBody, TEST_WEBHOOK_SECRET, now),
    );
    expect(kept).toEqual({ status: 200, body: { data: { id: unmappable.id, status: 'unmapped' } } });
    assertNoTestPanIn(JSON.stringify(kept.body));
    const notJson = '{"id":';
    expect(
      await postWebhook(stack, notJson, signWebhookBody(notJson, TEST_WEBHOOK_SECRET, now)),
    ).toMatchObject({
      status: 400,
      body: { errors: [{ code: 'malformed-json' }] },
    });

    const good = notification();
    const goodBody = JSON.stringify(good);
    expect(
      (await postWebhook(stack, goodBody, signWebhookBody(goodBody, TEST_WEBHOOK_SECRET, now))).status,
    ).toBe(200);
    // a redelivery of the same id is acknowledged and not published again
    expect(
      (await postWebhook(stack, goodBody, signWebhookBody(goodBody, TEST_WEBHOOK_SECRET, now))).status,
    ).toBe(200);
    // `received` waits its full 1.5 s for a second event: the quiet window in which a republished
    // redelivery would have arrived.
    const events = await received;
    expect(events.map((e) => e.data?.cardEvents.id)).toEqual([good.id]);
  });
});
