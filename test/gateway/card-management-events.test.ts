import { afterEach, describe, expect, it } from 'vitest';
import { graphql } from '../generated/index.ts';
import { CreateCard } from '../support/documents.ts';
import { assertNoTestPanIn, collect, type Stack, useStack, waitForSubscribers } from '../support/fixtures.ts';

/**
 * Issue 19 end to end: a card created through the gateway from a documented card management test
 * card (sandbox contract §8: 5100260000069201, fixed card id
 * CRDqKgQbzM9cUWNUAQR5EFu9BrZuSLP5tgqxadbJBJdqgc2iKQ5i) and subscribed to the account updater
 * through the gateway makes the embedded sandbox send a signed `cmp_au_card.updated`; live
 * subscribers receive it with source CARD_MANAGEMENT and the card read back from the card interface
 * (not from account updater v1), once per event for all of them.
 */

const UPDATED_TEST_PAN = '5100260000069201';
const UPDATED_TEST_CARD_ID = 'CRDqKgQbzM9cUWNUAQR5EFu9BrZuSLP5tgqxadbJBJdqgc2iKQ5i';
const ENROLLED_TEST_PAN = '5100260000079200';
const ENROLLED_TEST_CARD_ID = 'CRDnKQt89XXFRQVBEzcRvkhvmhs5rpBvxkv3PbeAFPB52zFFqjCR';

const CardManagementEvents = graphql(`
  subscription CME_Live($types: [CardEventType!]) {
    cardEvents(types: $types) {
      id
      type
      event
      source
      tenant
      cardId
      failureReason
      oldAccountNumber
      newAccountNumber
      oldExpiry { month year }
      newExpiry { month year }
      card {
        __typename
        ... on CardEventCardSuccess { data { cardId } }
        ... on Error { code }
      }
      cardInterfaceCard {
        __typename
        ... on CardEventCardInterfaceCardSuccess {
          data { cardId vaultId bin last4 expMonth expYear panAlias updateSubscription { state } }
        }
        ... on Error { code }
      }
    }
  }
`);

const CardManagementHistory = graphql(`
  query CME_History {
    cardEvents(first: 20) {
      __typename
      ... on QueryCardEventsSuccess {
        data {
          edges {
            node {
              type
              source
              cardId
              card { __typename }
              cardInterfaceCard {
                __typename
                ... on CardEventCardInterfaceCardSuccess { data { cardId last4 } }
              }
            }
          }
        }
      }
    }
  }
`);

const SubscribeCardUpdates = graphql(`
  mutation CME_Subscribe($cardId: String!) {
    subscribeCardUpdates(cardId: $cardId) {
      __typename
      ... on MutationSubscribeCardUpdatesSuccess { data { state } }
      ... on Error { code }
    }
  }
`);

async function createCard(stack: Stack, token: string, pan: string): Promise<string> {
  const result = await stack.execute(CreateCard, { input: { pan, expMonth: 7, expYear: 31 } }, token);
  const payload = result.data?.createCard;
  if (payload?.__typename !== 'MutationCreateCardSuccess')
    throw new Error(`card creation failed: ${payload?.__typename}`);
  return payload.data.cardId;
}

async function subscribe(stack: Stack, token: string, cardId: string): Promise<void> {
  const result = await stack.execute(SubscribeCardUpdates, { cardId }, token);
  expect(result.data?.subscribeCardUpdates).toEqual({
    __typename: 'MutationSubscribeCardUpdatesSuccess',
    data: { state: 'enrolled' },
  });
}

/** The card interface card reads the sandbox answered for `cardId`. */
function interfaceCardReads(stack: Stack, cardId: string): number {
  return stack
    .sandbox!.requests()
    .filter((r) => r.method === 'GET' && r.path === `/card-interface/cards/${cardId}`).length;
}

describe('card management events (documented wire)', () => {
  // The documented wire is where the sandbox sends card management notifications (§8).
  const t = useStack({ SANDBOX_WEBHOOK_DELAY_MS: '150', SANDBOX_WIRE: 'documented' });

  afterEach(() => waitForSubscribers(t.stack.app, 'tntsandbox1', 0));

  it('streams cmp_au_card.updated of a subscribed test card with the card read once from the card interface', async () => {
    const subscribers = [t.stack.wsClient(t.vault1Token), t.stack.wsClient(t.vault1Token)].map((client) =>
      collect(client, CardManagementEvents, { types: ['UPDATED'] }, 1),
    );
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 2);

    const cardId = await createCard(t.stack, t.vault1Token, UPDATED_TEST_PAN);
    expect(cardId).toBe(UPDATED_TEST_CARD_ID);
    const readsBefore = interfaceCardReads(t.stack, cardId);
    await subscribe(t.stack, t.vault1Token, cardId);

    const results = await Promise.all(subscribers);
    for (const [result] of results) {
      expect(result?.errors).toBeUndefined();
      expect(result?.data?.cardEvents).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        type: 'UPDATED',
        event: 'cmp_au_card.updated',
        source: 'CARD_MANAGEMENT',
        tenant: 'tntsandbox1',
        cardId: UPDATED_TEST_CARD_ID,
        failureReason: null,
        oldAccountNumber: '510026******9201',
        newAccountNumber: null,
        oldExpiry: { month: 7, year: 2031 },
        newExpiry: { month: 7, year: 2034 },
        // The card management card is not an account updater v1 card: no v1 read.
        card: null,
        cardInterfaceCard: {
          __typename: 'CardEventCardInterfaceCardSuccess',
          data: {
            cardId: UPDATED_TEST_CARD_ID,
            vaultId: 'tntsandbox1',
            bin: '510026',
            last4: '9201',
            expMonth: 7,
            expYear: 31,
            panAlias: expect.any(String),
            updateSubscription: { state: 'enrolled' },
          },
        },
      });
    }
    expect(results[0]![0]!.data!.cardEvents.id).toBe(results[1]![0]!.data!.cardEvents.id);
    // One card interface read for the event, however many subscribers; no account updater read.
    expect(interfaceCardReads(t.stack, cardId) - readsBefore).toBe(1);
    expect(t.stack.sandbox!.requests().filter((r) => r.path === `/account-updater/cards/${cardId}`)).toEqual(
      [],
    );
    assertNoTestPanIn(JSON.stringify(results));
  });

  it('reads each card of a history page once from the card interface through the request loaders', async () => {
    // Vault 2, whose first cards of the two test PANs get their fixed ids: the test needs no other's cards.
    const token = t.vault2Token;
    for (const [pan, cardId, type] of [
      [UPDATED_TEST_PAN, UPDATED_TEST_CARD_ID, 'UPDATED'],
      [ENROLLED_TEST_PAN, ENROLLED_TEST_CARD_ID, 'ENROLLED'],
    ] as const) {
      const live = collect(t.stack.wsClient(token), CardManagementEvents, { types: [type] }, 1);
      await waitForSubscribers(t.stack.app, 'tntsandbox2', 1);
      expect(await createCard(t.stack, token, pan)).toBe(cardId);
      await subscribe(t.stack, token, cardId);
      const [event] = await live;
      expect(event?.data?.cardEvents).toMatchObject({
        type,
        event: `cmp_au_card.${type.toLowerCase()}`,
        source: 'CARD_MANAGEMENT',
        tenant: 'tntsandbox2',
        cardId,
        card: null,
        cardInterfaceCard: { __typename: 'CardEventCardInterfaceCardSuccess' },
      });
      await waitForSubscribers(t.stack.app, 'tntsandbox2', 0);
    }

    const before = {
      updated: interfaceCardReads(t.stack, UPDATED_TEST_CARD_ID),
      enrolled: interfaceCardReads(t.stack, ENROLLED_TEST_CARD_ID),
    };
    const history = await t.stack.execute(CardManagementHistory, {}, token);
    expect(history.errors).toBeUndefined();
    const page = history.data?.cardEvents;
    if (page?.__typename !== 'QueryCardEventsSuccess') throw new Error(`history: ${page?.__typename}`);
    const nodes = page.data.edges.map((edge) => edge.node);
    expect(nodes).toEqual([
      {
        type: 'UPDATED',
        source: 'CARD_MANAGEMENT',
        cardId: UPDATED_TEST_CARD_ID,
        card: null,
        cardInterfaceCard: {
          __typename: 'CardEventCardInterfaceCardSuccess',
          data: { cardId: UPDATED_TEST_CARD_ID, last4: '9201' },
        },
      },
      {
        type: 'ENROLLED',
        source: 'CARD_MANAGEMENT',
        cardId: ENROLLED_TEST_CARD_ID,
        card: null,
        cardInterfaceCard: {
          __typename: 'CardEventCardInterfaceCardSuccess',
          data: { cardId: ENROLLED_TEST_CARD_ID, last4: '9200' },
        },
      },
    ]);
    // One read per distinct card: the events dropped their cached reads, the page reads each once.
    expect(interfaceCardReads(t.stack, UPDATED_TEST_CARD_ID) - before.updated).toBe(1);
    expect(interfaceCardReads(t.stack, ENROLLED_TEST_CARD_ID) - before.enrolled).toBe(1);
    assertNoTestPanIn(JSON.stringify(history));
  });

  it('streams cmp_au_card.enrollment_failed of a failing enrolment (4002) with its reason code', async () => {
    const live = collect(
      t.stack.wsClient(t.vault1Token),
      CardManagementEvents,
      { types: ['ENROLLMENT_FAILED'] },
      1,
    );
    await waitForSubscribers(t.stack.app, 'tntsandbox1', 1);
    const cardId = await createCard(t.stack, t.vault1Token, '5100260000994002');
    expect(cardId).toMatch(/^CRD[0-9A-Za-z]{49}$/);
    const subscribed = await t.stack.execute(SubscribeCardUpdates, { cardId }, t.vault1Token);
    expect(subscribed.data?.subscribeCardUpdates).toEqual({
      __typename: 'MutationSubscribeCardUpdatesSuccess',
      data: { state: 'failed' },
    });
    const [event] = await live;
    expect(event?.errors).toBeUndefined();
    expect(event?.data?.cardEvents).toMatchObject({
      type: 'ENROLLMENT_FAILED',
      event: 'cmp_au_card.enrollment_failed',
      source: 'CARD_MANAGEMENT',
      cardId,
      failureReason: 'validation-failed',
      oldAccountNumber: null,
      card: null,
      cardInterfaceCard: {
        __typename: 'CardEventCardInterfaceCardSuccess',
        data: { cardId, last4: '4002', updateSubscription: null },
      },
    });
    assertNoTestPanIn(JSON.stringify(event));
  });
});
