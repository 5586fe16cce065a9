import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { signWebhookBody } from '../../src/lib/webhook-signature.ts';
import { graphql } from '../generated/index.ts';
import {
  assertNoTestPanIn,
  CARD_INTERFACE_TEST_CARD_IDS,
  collect,
  DOCUMENTED_V1_DETAILS,
  documentedNetworkTokenNotification,
  documentedV1Notification,
  notification,
  postNotification,
  TEST_CARD_ID,
  TEST_WEBHOOK_SECRET,
  useStack,
  waitForSubscribers,
} from '../support/fixtures.ts';

/**
 * Issue 19 item 3 end to end on the gateway: a signed notification of every documented shape
 * (sandbox contract §8; /work/shared/provider-docs/examples.json) reaches live subscribers and the
 * history; a signed notification that cannot be mapped is acknowledged, stored redacted, counted and
 * listed to operators (`operator:read`) of its vault only.
 */

const LiveCardEvents = graphql(`
  subscription CED_Live {
    cardEvents {
      id
      type
      event
      source
      cardId
      failureReason
      occurredAt
      createdAt
      oldAccountNumber
      newAccountNumber
      oldExpiry { month year }
      newExpiry { month year }
    }
  }
`);

const CardEventHistory = graphql(`
  query CED_History {
    cardEvents(first: 100) {
      __typename
      ... on QueryCardEventsSuccess { data { edges { node { id type event source cardId failureReason } } } }
    }
  }
`);

const LiveTokenEvents = graphql(`
  subscription CED_LiveTokens {
    networkTokenEvents {
      id
      type
      event
      source
      tenant
      panAlias
      state
      stateName
      networkTokenId
      networkTokenLast4
      expiresAt
      cardBin
      cardLast4
      cardExpMonth
      cardExpYear
      paymentAccountReference
      timestamp
      occurredAt
      createdAt
      updatedAt
    }
  }
`);

const TokenEventHistory = graphql(`
  query CED_TokenHistory {
    networkTokenEvents(first: 10) {
      __typename
      ... on QueryNetworkTokenEventsSuccess { data { edges { node { id type stateName panAlias createdAt } } } }
    }
  }
`);

const Unmapped = graphql(`
  query CED_Unmapped($vaultId: String) {
    unmappedNotifications(first: 50, vaultId: $vaultId) {
      __typename
      ... on QueryUnmappedNotificationsSuccess {
        data { edges { node { id vaultId reason event receivedAt body bodyEncoding truncated bodyBytes } } }
      }
      ... on Error { code }
    }
  }
`);

/** Waits until `count` live `networkTokenEvents` subscriptions of `tenant` are registered. */
async function waitForTokenSubscribers(app: App, tenant: string, count: number): Promise<void> {
  await expect
    .poll(() => app.networkTokenEvents?.subscriberCount(tenant) ?? 0, { timeout: 5_000, interval: 10 })
    .toBe(count);
}

describe('documented notifications on the gateway (issue 19 item 3)', () => {
  const t = useStack();

  afterEach(async () => {
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 0);
  });

  it('delivers the v1 per-event subsets, cmp_au_card.* with 52-character ids, enrollment_failed and an unknown kind live and in history', async () => {
    const interfaceCard = CARD_INTERFACE_TEST_CARD_IDS['5100260000069201']!;
    const failedCard = CARD_INTERFACE_TEST_CARD_IDS['5100260000079200']!;
    const sent = [
      ...Object.keys(DOCUMENTED_V1_DETAILS).map((event) => documentedV1Notification(event)),
      notification({ event: 'cmp_au_card.updated', cardId: interfaceCard }),
      notification({
        event: 'cmp_au_card.enrollment_failed',
        cardId: failedCard,
        details: { reason_code: 'validation-failed' },
      }),
      notification({ event: 'cmp_au_card.card_reissued', timestamp: '2024-12-12T09:59:44.667670' }),
    ];
    const live = collect(t.stack.wsClient(t.vault1Token), LiveCardEvents, {}, sent.length);
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 1);
    for (const body of sent) {
      expect(await postNotification(t.stack.url, body)).toEqual({
        status: 200,
        body: { data: { id: body.id, status: 'accepted' } },
      });
    }
    const expected = [
      [sent[0]!.id, 'UPDATED', 'au_card.updated', 'ACCOUNT_UPDATER', TEST_CARD_ID, null],
      [sent[1]!.id, 'EXPIRED', 'au_card.expired', 'ACCOUNT_UPDATER', TEST_CARD_ID, null],
      [sent[2]!.id, 'CLOSED', 'au_card.closed', 'ACCOUNT_UPDATER', TEST_CARD_ID, null],
      [sent[3]!.id, 'NON_PARTICIPATING', 'au_card.non_participating', 'ACCOUNT_UPDATER', TEST_CARD_ID, null],
      [
        sent[4]!.id,
        'CONTACT_CARDHOLDER_ADVICE',
        'au_card.contact_cardholder_advice',
        'ACCOUNT_UPDATER',
        TEST_CARD_ID,
        null,
      ],
      [sent[5]!.id, 'UPDATED', 'cmp_au_card.updated', 'CARD_MANAGEMENT', interfaceCard, null],
      [
        sent[6]!.id,
        'ENROLLMENT_FAILED',
        'cmp_au_card.enrollment_failed',
        'CARD_MANAGEMENT',
        failedCard,
        'validation-failed',
      ],
      [sent[7]!.id, 'OTHER', 'cmp_au_card.card_reissued', 'CARD_MANAGEMENT', TEST_CARD_ID, null],
    ];
    const received = (await live).map((result) => {
      expect(result.errors).toBeUndefined();
      return result.data!.cardEvents;
    });
    expect(received.map((e) => [e.id, e.type, e.event, e.source, e.cardId, e.failureReason])).toEqual(
      expected,
    );
    // v1 non_participating: card id and occurrence time only, every other details member null.
    expect(received[3]).toMatchObject({
      occurredAt: '2026-11-21T05:01:02.123Z',
      createdAt: null,
      oldAccountNumber: null,
      newAccountNumber: null,
      oldExpiry: null,
      newExpiry: null,
    });
    expect(received[2]).toMatchObject({ oldAccountNumber: '510026******2002', newExpiry: null });

    const history = await t.stack.execute(CardEventHistory, {}, t.vault1Token);
    expect(history.data?.cardEvents.__typename).toBe('QueryCardEventsSuccess');
    if (history.data?.cardEvents.__typename !== 'QueryCardEventsSuccess') return;
    const nodes = history.data.cardEvents.data.edges.map(({ node }) => node);
    const byId = new Map(nodes.map((node) => [node.id, node]));
    for (const [id, type, event, source, cardId, failureReason] of expected) {
      expect(byId.get(id as string)).toEqual({ id, type, event, source, cardId, failureReason });
    }
  });

  it('delivers the network_token.updated example of examples.json (object details) live and in history', async () => {
    const vault = 'tntt0fzksdr';
    const token = await t.stack.token({ vaults: [vault] });
    const live = collect(t.stack.wsClient(token), LiveTokenEvents, {}, 1);
    await waitForTokenSubscribers(t.stack.app, vault, 1);
    const body = documentedNetworkTokenNotification();
    expect(typeof body.details).toBe('object');
    expect(await postNotification(t.stack.url, body)).toEqual({
      status: 200,
      body: { data: { id: 'd82e56a0-3b6e-417a-a7cb-674f84d806e3', status: 'accepted' } },
    });
    const [result] = await live;
    expect(result?.errors).toBeUndefined();
    expect(result?.data?.networkTokenEvents).toEqual({
      id: 'd82e56a0-3b6e-417a-a7cb-674f84d806e3',
      type: 'UPDATED',
      event: 'network_token.updated',
      source: 'NETWORK_TOKENS',
      tenant: vault,
      panAlias: '5114103XX3542293',
      state: null,
      stateName: 'CARD_UPDATED',
      networkTokenId: '0e28d9f6-d8a3-43ca-9bd8-b99c477c2b4c',
      networkTokenLast4: '5022',
      expiresAt: '2027-10',
      cardBin: '511410',
      cardLast4: '2293',
      cardExpMonth: 12,
      cardExpYear: 2025,
      paymentAccountReference: null,
      timestamp: '2024-12-16T18:30:25.383Z',
      occurredAt: null,
      createdAt: '2024-12-12T09:59:44.667670Z',
      updatedAt: '2024-12-12T09:59:44.667670Z',
    });
    const history = await t.stack.execute(TokenEventHistory, {}, token);
    expect(history.data?.networkTokenEvents).toEqual({
      __typename: 'QueryNetworkTokenEventsSuccess',
      data: {
        edges: [
          {
            node: {
              id: 'd82e56a0-3b6e-417a-a7cb-674f84d806e3',
              type: 'UPDATED',
              stateName: 'CARD_UPDATED',
              panAlias: '5114103XX3542293',
              createdAt: '2024-12-12T09:59:44.667670Z',
            },
          },
        ],
      },
    });
    await waitForTokenSubscribers(t.stack.app, vault, 0);
  });

  it('delivers a card notification naming its vault only in details.tenant_id to that vault alone', async () => {
    const live = collect(t.stack.wsClient(t.vault2Token), LiveCardEvents, {}, 1);
    await waitForSubscribers(t.stack.app, 'tntsandbox2', 1);
    const body = notification({ envelope: { tenant: undefined }, details: { tenant_id: 'tntsandbox2' } });
    expect(await postNotification(t.stack.url, body)).toEqual({
      status: 200,
      body: { data: { id: body.id, status: 'accepted' } },
    });
    const [result] = await live;
    expect(result?.errors).toBeUndefined();
    expect(result?.data?.cardEvents).toMatchObject({
      id: body.id,
      type: 'UPDATED',
      event: 'au_card.updated',
      source: 'ACCOUNT_UPDATER',
      cardId: TEST_CARD_ID,
    });
    const ofVault1 = await t.stack.execute(CardEventHistory, {}, t.vault1Token);
    if (ofVault1.data?.cardEvents.__typename !== 'QueryCardEventsSuccess')
      throw new Error(JSON.stringify(ofVault1));
    expect(ofVault1.data.cardEvents.data.edges.map(({ node }) => node.id)).not.toContain(body.id);
    const ofVault2 = await t.stack.execute(CardEventHistory, {}, t.vault2Token);
    if (ofVault2.data?.cardEvents.__typename !== 'QueryCardEventsSuccess')
      throw new Error(JSON.stringify(ofVault2));
    expect(ofVault2.data.cardEvents.data.edges.map(({ node }) => node.id)).toEqual([body.id]);
    await waitForSubscribers(t.stack.app, 'tntsandbox2', 0);
  });

  it('acknowledges an unmappable notification, stores it redacted, counts it and lists it to operator:read of its vault only', async () => {
    const pan = '4111111111111111';
    const counted = async () =>
      (await t.stack.app.metrics.webhookNotifications.get()).values
        .filter((sample) => sample.labels.outcome === 'unmapped')
        .reduce((sum, sample) => sum + sample.value, 0);
    const before = await counted();
    const noTenant = notification({ envelope: { tenant: undefined, summary: `card ${pan}` } });
    const noId = notification({
      envelope: { id: undefined, cvc: '737' },
      details: { old_account_number: pan },
    });
    const notObject = `[${pan}]`;
    // A vault with a trailing space, and a vault this gateway does not serve: neither attributes it.
    const trailingSpace = notification({ tenant: 'tntsandbox1 ' });
    const unserved = notification({ tenant: 'tntsandbox3', envelope: { id: undefined } });
    const answers = [
      await postNotification(t.stack.url, noTenant),
      await postNotification(t.stack.url, noId),
      await postNotification(t.stack.url, notObject),
      await postNotification(t.stack.url, trailingSpace),
      await postNotification(t.stack.url, unserved),
    ];
    expect(
      answers.map((answer) => [answer.status, (answer.body as { data: { status: string } }).data.status]),
    ).toEqual([
      [200, 'unmapped'],
      [200, 'unmapped'],
      [200, 'unmapped'],
      [200, 'unmapped'],
      [200, 'unmapped'],
    ]);
    expect(await counted()).toBe(before + 5);

    // An operator of the whole gateway: a token naming every vault it serves (both sandbox vaults).
    const gatewayOperator = await t.stack.token({
      vaults: ['tntsandbox1', 'tntsandbox2'],
      scopes: ['operator:read'],
    });
    const listed = await t.stack.execute(Unmapped, {}, gatewayOperator);
    expect(listed.errors).toBeUndefined();
    const result = listed.data?.unmappedNotifications;
    if (result?.__typename !== 'QueryUnmappedNotificationsSuccess') throw new Error(JSON.stringify(listed));
    const nodes = result.data.edges.map(({ node }) => node);
    expect(nodes.map((node) => [node.vaultId, node.reason, node.event])).toEqual([
      [null, 'NO_TENANT', 'au_card.updated'],
      ['tntsandbox1', 'NO_ID', 'au_card.updated'],
      [null, 'NOT_AN_OBJECT', null],
      [null, 'NO_TENANT', 'au_card.updated'],
      ['tntsandbox3', 'NO_ID', 'au_card.updated'],
    ]);
    expect(nodes[0]!.id).toBe(noTenant.id);
    expect(nodes[2]!.id).toMatch(/^body-sha256:[a-p]{64}$/);
    expect(nodes[3]!.id).toBe(trailingSpace.id);
    expect(JSON.parse(nodes[0]!.body).summary).toBe('card 411111******1111');
    expect(JSON.parse(nodes[1]!.body).cvc).toBe('[redacted]');
    expect(nodes[2]).toMatchObject({ body: '["411111******1111"]', truncated: false, bodyBytes: 18 });
    assertNoTestPanIn(JSON.stringify(listed));

    // One vault's operator sees that vault's entries only: never the unattributed ones.
    const operator = await t.stack.token({ vaults: ['tntsandbox1'], scopes: ['operator:read'] });
    const own = await t.stack.execute(Unmapped, {}, operator);
    if (own.data?.unmappedNotifications.__typename !== 'QueryUnmappedNotificationsSuccess')
      throw new Error(JSON.stringify(own));
    expect(own.data.unmappedNotifications.data.edges.map(({ node }) => [node.vaultId, node.reason])).toEqual([
      ['tntsandbox1', 'NO_ID'],
    ]);
    const otherOperator = await t.stack.token({ vaults: ['tntsandbox2'], scopes: ['operator:read'] });
    const other = await t.stack.execute(Unmapped, {}, otherOperator);
    if (other.data?.unmappedNotifications.__typename !== 'QueryUnmappedNotificationsSuccess')
      throw new Error(JSON.stringify(other));
    expect(other.data.unmappedNotifications.data.edges).toEqual([]);
    // A token naming the unserved vault is no operator of the gateway either.
    const unservedOperator = await t.stack.token({
      vaults: ['tntsandbox1', 'tntsandbox3'],
      scopes: ['operator:read'],
    });
    const fromUnserved = await t.stack.execute(Unmapped, {}, unservedOperator);
    if (fromUnserved.data?.unmappedNotifications.__typename !== 'QueryUnmappedNotificationsSuccess')
      throw new Error(JSON.stringify(fromUnserved));
    expect(fromUnserved.data.unmappedNotifications.data.edges.map(({ node }) => node.reason)).toEqual([
      'NO_ID',
    ]);
    const ofVault = await t.stack.execute(Unmapped, { vaultId: 'tntsandbox1' }, gatewayOperator);
    if (ofVault.data?.unmappedNotifications.__typename !== 'QueryUnmappedNotificationsSuccess')
      throw new Error(JSON.stringify(ofVault));
    expect(ofVault.data.unmappedNotifications.data.edges.map(({ node }) => node.reason)).toEqual(['NO_ID']);

    // A signed body that is not UTF-8: kept as redacted bytes, counted, answered 200, unattributed.
    const latin1 = Buffer.from(`{"id":"nu-1","summary":"caf\u00e9 ${pan}"}`, 'latin1');
    const answer = await request(`${t.stack.url}/webhooks/card-events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'vgs-signature': signWebhookBody(latin1, TEST_WEBHOOK_SECRET, Math.floor(Date.now() / 1000)),
      },
      body: latin1,
    });
    expect([
      answer.statusCode,
      ((await answer.body.json()) as { data: { status: string } }).data.status,
    ]).toEqual([200, 'unmapped']);
    expect(await counted()).toBe(before + 6);
    const withBytes = await t.stack.execute(Unmapped, {}, gatewayOperator);
    if (withBytes.data?.unmappedNotifications.__typename !== 'QueryUnmappedNotificationsSuccess')
      throw new Error(JSON.stringify(withBytes));
    const bytes = withBytes.data.unmappedNotifications.data.edges.at(-1)!.node;
    expect([bytes.vaultId, bytes.reason, bytes.bodyEncoding, bytes.bodyBytes]).toEqual([
      null,
      'NOT_UTF8',
      'BASE64',
      latin1.length,
    ]);
    expect(Buffer.from(bytes.body, 'base64').toString('latin1')).toBe(
      '{"id":"nu-1","summary":"caf\u00e9 411111******1111"}',
    );

    // Without the scope (every upstream scope, but not operator:read): forbidden.
    const withoutScope = await t.stack.execute(Unmapped, {}, t.vault1Token);
    expect(withoutScope.data?.unmappedNotifications).toEqual({
      __typename: 'ForbiddenError',
      code: 'forbidden',
    });
    const foreignVault = await t.stack.execute(Unmapped, { vaultId: 'tntsandbox2' }, operator);
    expect(foreignVault.data?.unmappedNotifications).toEqual({
      __typename: 'ForbiddenError',
      code: 'vault-not-allowed',
    });
  });
});
