import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replacementPan, SANDBOX_TEST_CARDS } from '../../src/sandbox/test-cards.ts';
import { graphql } from '../generated/index.ts';
import { member, type Stack, startStack, useStack } from '../support/fixtures.ts';

/**
 * The card interface through the gateway's GraphQL API over HTTP against the embedded sandbox:
 * `createCard` (every variant of the spec's POST /cards), `card`, `node(id)`, `subscribeCardUpdates`,
 * `unsubscribeCardUpdates`, `checkCardUpdates` for every card of sandbox contract §5.3, and the upstream
 * fault cards of §5.4 (docs/gap-decisions.md "Card interface").
 */

// Shared by the documents below; the codegen inlines it into each of them.
graphql(`
  fragment IT_CI_CardFields on Card {
    id
    cardId
    vaultId
    panAlias
    cvcAlias
    bin
    last4
    brand
    expMonth
    expYear
    cvcStatus
    tokenType
    walletType
    cardholder { name company address { address1 address2 address3 address4 city } }
    metadata
    updateSubscription { subscriptionId state }
    createdAt
    updatedAt
  }
`);

const CreateCard = graphql(`
  mutation IT_CI_CreateCard($input: CreateCardInput!, $vaultId: String) {
    createCard(input: $input, vaultId: $vaultId) {
      __typename
      ... on MutationCreateCardSuccess { duplicate data { ...IT_CI_CardFields } }
      ...ErrorFields
    }
  }
`);

const ReadCard = graphql(`
  query IT_CI_ReadCard($cardId: String!, $vaultId: String) {
    card(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ... on QueryCardSuccess { data { ...IT_CI_CardFields } }
      ...ErrorFields
    }
  }
`);

const ReadNode = graphql(`
  query IT_CI_ReadNode($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on Card { cardId vaultId panAlias bin last4 }
    }
  }
`);

const Subscribe = graphql(`
  mutation IT_CI_Subscribe($cardId: String!, $vaultId: String) {
    subscribeCardUpdates(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ... on MutationSubscribeCardUpdatesSuccess { data { subscriptionId state createdAt updatedAt } }
      ...ErrorFields
    }
  }
`);

const Unsubscribe = graphql(`
  mutation IT_CI_Unsubscribe($cardId: String!, $vaultId: String) {
    unsubscribeCardUpdates(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ... on MutationUnsubscribeCardUpdatesSuccess { data { cardId metadata updateSubscription { subscriptionId state } } }
      ...ErrorFields
    }
  }
`);

const CheckUpdates = graphql(`
  mutation IT_CI_CheckUpdates($cardId: String!, $vaultId: String) {
    checkCardUpdates(cardId: $cardId, vaultId: $vaultId) {
      __typename
      ... on MutationCheckCardUpdatesSuccess { data { event updatedValues { fieldName oldValue newValue } } }
      ...ErrorFields
    }
  }
`);

/** A PAN masked as the gateway shows it: BIN, `*` padding to 16 characters, last four. */
function masked(pan: string): string {
  return `${pan.slice(0, 6)}${'*'.repeat(Math.max(6, pan.length - 10))}${pan.slice(-4)}`;
}

/** The wire the stack's sandbox answers in (`SANDBOX_WIRE`, documented by default). */
const WIRE = process.env.SANDBOX_WIRE === 'specification' ? 'specification' : 'documented';
/** Card ids: the documented sandbox issues the card interface test table's 52 characters, the other 25. */
const CARD_ID = WIRE === 'documented' ? /^CRD[0-9A-Za-z]{49}$/ : /^CRD[0-9A-Za-z]{22}$/;
/** A card id of the card interface's own test table (provider-docs examples.json): 52 characters. */
const TEST_TABLE_CARD_ID = 'CRDnKQt89XXFRQVBEzcRvkhvmhs5rpBvxkv3PbeAFPB52zFFqjCR';
const SUBSCRIPTION_ID = /^CUS[0-9A-Za-z]{22}$/;
const TOK_ALIAS = /^tok_sandbox_[0-9A-Za-z]{22}$/;
/**
 * The card interface sends zone-less microsecond timestamps (docs/gap-decisions.md "Common"); the
 * gateway's upstream client normalises them to ISO 8601 UTC with milliseconds.
 */
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Contract §5.3, Visa and Mastercard: PAN, event, what changes. */
const CHECK_CARDS_VISA_MASTERCARD: readonly [string, string, 'number' | 'expiry' | undefined][] = [
  ['5100260000193001', 'updated', 'number'],
  ['4000210000593001', 'updated', 'number'],
  ['5100260000593002', 'updated', 'expiry'],
  ['4000210000093002', 'updated', 'expiry'],
  ['5100260000093003', 'valid', undefined],
  ['4000210000993003', 'valid', undefined],
  ['5100260000993004', 'closed', undefined],
  ['4000210000493004', 'closed', undefined],
  ['5100260000493005', 'expired', undefined],
  ['4000210000893005', 'expired', undefined],
  ['5100260000893006', 'contact_cardholder_advice', undefined],
  ['4000210000393006', 'contact_cardholder_advice', undefined],
  ['5100260000393007', 'non_participating', undefined],
  ['4000210000793007', 'non_participating', undefined],
];

/** Contract §5.3, American Express and Discover (answer only when subscribed). */
const CHECK_CARDS_AMEX_DISCOVER: readonly [string, string, 'number' | undefined][] = [
  ['378282000193001', 'updated', 'number'],
  ['6011000000493001', 'updated', 'number'],
  ['378282000093003', 'valid', undefined],
  ['6011000000393003', 'valid', undefined],
];

/** Contract §5.4 faults: PAN, upstream status, code, retryable. */
const FAULT_CARDS: readonly [string, number, string, boolean][] = [
  ['5100260000394401', 401, 'unauthorized', false],
  ['5100260000294403', 403, 'forbidden', false],
  ['5100260000394500', 500, 'server-error', true],
  ['5100260000294502', 502, 'bad-gateway', true],
  ['5100260000694503', 503, 'service-unavailable', true],
  ['5100260000194504', 504, 'gateway-timeout', true],
];

const VISA = '4111111111111111';
const MASTERCARD = '5555555555554444';
const VISA_SPACED = '4242 4242 4242 4242';
const DINERS = '36227206271667';
const CVC = '7391';
/** An American Express test number no other test of this file creates (Duplicate Card Check). */
const AMEX_DUPLICATE = '378282246310005';
const VAULT1 = 'tntsandbox1';

describe('card interface through GraphQL', () => {
  // Vault 2's account has the card interface's Duplicate Card Check on (read in the documented wire).
  const t = useStack({ SANDBOX_DUPLICATE_CARD_CHECK: 'tntsandbox2' });

  /** Creates a card in vault 1 from a PAN (expiry 11/29) and returns it. */
  async function createCard(pan: string) {
    const result = await t.stack.execute(
      CreateCard,
      { input: { pan, expMonth: 11, expYear: 29 } },
      t.vault1Token,
    );
    return member(result.data?.createCard, 'MutationCreateCardSuccess').data;
  }

  it('lists every check and fault card of contract §5.3 and §5.4 in these tables', () => {
    const tested = [
      ...CHECK_CARDS_VISA_MASTERCARD.map(([pan]) => pan),
      ...CHECK_CARDS_AMEX_DISCOVER.map(([pan]) => pan),
      ...FAULT_CARDS.map(([pan]) => pan),
      '5100260000994002',
      '4000210000494002',
      '5100260000794998',
    ].sort();
    const contract = SANDBOX_TEST_CARDS.filter((c) =>
      ['card-check', 'card-interface-fault'].includes(c.table),
    )
      .map((c) => c.pan)
      .sort();
    expect(tested).toEqual(contract);
  });

  describe('createCard', () => {
    it('keeps a complete card: pan, cvc, cvcStatus, cardholder and metadata; answers aliases only', async () => {
      const metadata = { customerId: 42, tags: ['gold'], nested: { note: 'vip' } };
      const cardholder = {
        name: 'Ada Lovelace',
        company: 'Analytical Engines Ltd',
        address: {
          address1: '12 St James Square',
          address2: 'Floor 2',
          address3: 'Suite 3',
          address4: 'Desk 4',
          city: 'London',
        },
      };
      const result = await t.stack.execute(
        CreateCard,
        {
          input: {
            pan: VISA,
            cvc: CVC,
            cvcStatus: 'active',
            expMonth: 11,
            expYear: 29,
            cardholder,
            metadata,
          },
        },
        t.vault1Token,
      );
      expect(result.status).toBe(200);
      const card = member(result.data?.createCard, 'MutationCreateCardSuccess').data;
      expect(card).toMatchObject({
        vaultId: VAULT1,
        bin: '411111',
        last4: '1111',
        brand: 'visa',
        expMonth: 11,
        expYear: 29,
        cvcStatus: 'active',
        tokenType: null,
        walletType: null,
        cardholder,
        metadata,
        updateSubscription: null,
      });
      expect(card.cardId).toMatch(CARD_ID);
      expect(card.panAlias).toMatch(TOK_ALIAS);
      expect(card.cvcAlias).toMatch(TOK_ALIAS);
      expect(card.cvcAlias).not.toBe(card.panAlias);
      // The documented create answer has no timestamps (a read has them); the specification's has.
      if (WIRE === 'documented') {
        expect([card.createdAt, card.updatedAt]).toEqual([null, null]);
      } else {
        expect(card.createdAt).toMatch(ISO_UTC);
        expect(card.updatedAt).toBe(card.createdAt);
      }
      expect(member(result.data?.createCard, 'MutationCreateCardSuccess').duplicate).toBe(false);
      expect(Buffer.from(card.id, 'base64').toString('utf8')).toBe(`Card:${VAULT1}:${card.cardId}`);
      const text = JSON.stringify(result);
      expect(text).not.toContain(VISA);
      expect(text).not.toContain(CVC);
    });

    it.each([
      ['DPAN', 'APPLE_PAY'],
      ['MPAN', 'GOOGLE_PAY'],
      ['PAN', null],
    ] as const)('keeps tokenType %s with walletType %s', async (tokenType, walletType) => {
      const result = await t.stack.execute(
        CreateCard,
        { input: { pan: MASTERCARD, expMonth: 3, expYear: 28, tokenType, walletType } },
        t.vault1Token,
      );
      const card = member(result.data?.createCard, 'MutationCreateCardSuccess').data;
      expect(card).toMatchObject({
        bin: '555555',
        last4: '4444',
        brand: 'mastercard',
        expMonth: 3,
        expYear: 28,
        tokenType,
        walletType,
        cvcAlias: null,
        cvcStatus: null,
        cardholder: null,
        metadata: {},
      });
      expect(card.panAlias).toMatch(TOK_ALIAS);
    });

    it('ignores spaces in the pan', async () => {
      const result = await t.stack.execute(
        CreateCard,
        { input: { pan: VISA_SPACED, expMonth: 1, expYear: 30 } },
        t.vault1Token,
      );
      const card = member(result.data?.createCard, 'MutationCreateCardSuccess').data;
      expect(card).toMatchObject({ bin: '424242', last4: '4242', brand: 'visa' });
    });

    it('creates a card from the panAlias of an earlier card of the vault', async () => {
      const first = await createCard(MASTERCARD);
      const result = await t.stack.execute(
        CreateCard,
        { input: { panAlias: first.panAlias, expMonth: 5, expYear: 31, metadata: { source: 'alias' } } },
        t.vault1Token,
      );
      const card = member(result.data?.createCard, 'MutationCreateCardSuccess').data;
      expect(card).toMatchObject({
        panAlias: first.panAlias,
        bin: '555555',
        last4: '4444',
        brand: 'mastercard',
        expMonth: 5,
        expYear: 31,
        metadata: { source: 'alias' },
      });
      expect(card.cardId).toMatch(CARD_ID);
      expect(card.cardId).not.toBe(first.cardId);
    });
  });

  describe('Duplicate Card Check (sandbox contract §8: 303 with the existing card)', () => {
    it('answers the existing card with duplicate: true where the vault has it on (SANDBOX_DUPLICATE_CARD_CHECK)', async () => {
      const input = { pan: AMEX_DUPLICATE, expMonth: 6, expYear: 30 };
      const first = await t.stack.execute(CreateCard, { input }, t.vault2Token);
      const created = member(first.data?.createCard, 'MutationCreateCardSuccess');
      expect(created.duplicate).toBe(false);
      const again = await t.stack.execute(CreateCard, { input: { ...input, cvc: CVC } }, t.vault2Token);
      const second = member(again.data?.createCard, 'MutationCreateCardSuccess');
      if (WIRE === 'documented') {
        expect(second.duplicate).toBe(true);
        // The existing card, read after the 303: same id, alias and expiry, with its timestamps.
        expect(second.data).toMatchObject({
          cardId: created.data.cardId,
          panAlias: created.data.panAlias,
          vaultId: 'tntsandbox2',
          brand: 'amex',
          cvcAlias: null,
        });
        expect(second.data.createdAt).toMatch(ISO_UTC);
      } else {
        // The specification's reading has no duplicate detection: a second card.
        expect(second.duplicate).toBe(false);
        expect(second.data.cardId).not.toBe(created.data.cardId);
      }
      expect(JSON.stringify(again)).not.toMatch(new RegExp(`${AMEX_DUPLICATE}|${CVC}`));
      // Vault 1 has no Duplicate Card Check: the same PAN makes new cards there.
      const vault1 = await t.stack.execute(CreateCard, { input }, t.vault1Token);
      expect(member(vault1.data?.createCard, 'MutationCreateCardSuccess').duplicate).toBe(false);
    });
  });

  describe('card(cardId) and node(id)', () => {
    it('reads the card in its vault; another vault gets CardNotFoundError and a null node', async () => {
      const created = await t.stack.execute(
        CreateCard,
        { input: { pan: VISA, cvc: CVC, expMonth: 11, expYear: 29, metadata: { customerId: 7 } } },
        t.vault1Token,
      );
      const card = member(created.data?.createCard, 'MutationCreateCardSuccess').data;

      const read = await t.stack.execute(ReadCard, { cardId: card.cardId }, t.vault1Token);
      const readCard = member(read.data?.card, 'QueryCardSuccess').data;
      expect(readCard).toEqual({ ...card, createdAt: readCard.createdAt, updatedAt: readCard.updatedAt });
      expect(readCard.createdAt).toMatch(ISO_UTC);
      expect(readCard.updatedAt).toBe(readCard.createdAt);

      const node = await t.stack.execute(ReadNode, { id: card.id }, t.vault1Token);
      expect(node.data?.node).toEqual({
        __typename: 'Card',
        id: card.id,
        cardId: card.cardId,
        vaultId: VAULT1,
        panAlias: card.panAlias,
        bin: '411111',
        last4: '1111',
      });

      const otherVault = await t.stack.execute(ReadCard, { cardId: card.cardId }, t.vault2Token);
      expect(member(otherVault.data?.card, 'CardNotFoundError').code).toBe('card-not-found');
      const otherNode = await t.stack.execute(ReadNode, { id: card.id }, t.vault2Token);
      expect(otherNode.errors).toBeUndefined();
      expect(otherNode.data?.node).toBeNull();
    });

    it('answers CardNotFoundError for a well-formed id that does not exist, 25 or 52 characters', async () => {
      for (const cardId of ['CRD0000000000000000000000', TEST_TABLE_CARD_ID]) {
        const result = await t.stack.execute(ReadCard, { cardId }, t.vault1Token);
        expect(member(result.data?.card, 'CardNotFoundError').code).toBe('card-not-found');
      }
      const subscribed = await t.stack.execute(Subscribe, { cardId: TEST_TABLE_CARD_ID }, t.vault1Token);
      expect(member(subscribed.data?.subscribeCardUpdates, 'CardNotFoundError').code).toBe('card-not-found');
      const checked = await t.stack.execute(CheckUpdates, { cardId: TEST_TABLE_CARD_ID }, t.vault1Token);
      expect(member(checked.data?.checkCardUpdates, 'CardNotFoundError').code).toBe('card-not-found');
    });

    it('refuses an id longer than CRD + 64 or with other characters as invalid input, before any upstream call', async () => {
      const before = t.stack.sandbox!.requests().length;
      for (const cardId of [`CRD${'a'.repeat(65)}`, 'CRDabc/def', 'CRD']) {
        const result = await t.stack.execute(ReadCard, { cardId }, t.vault1Token);
        expect(member(result.data?.card, 'InputValidationError').issues).toEqual([
          { path: ['cardId'], message: 'must be a card id (CRD…)' },
        ]);
      }
      expect(t.stack.sandbox!.requests().length).toBe(before);
    });
  });

  describe('subscribeCardUpdates and unsubscribeCardUpdates', () => {
    it('subscribes (state enrolled), skips a second subscription, and unsubscribes', async () => {
      const created = await t.stack.execute(
        CreateCard,
        { input: { pan: VISA, expMonth: 11, expYear: 29, metadata: { customerId: 42 } } },
        t.vault1Token,
      );
      const { cardId } = member(created.data?.createCard, 'MutationCreateCardSuccess').data;

      const first = await t.stack.execute(Subscribe, { cardId }, t.vault1Token);
      const subscription = member(
        first.data?.subscribeCardUpdates,
        'MutationSubscribeCardUpdatesSuccess',
      ).data;
      expect(subscription.state).toBe('enrolled');
      expect(subscription.subscriptionId).toMatch(SUBSCRIPTION_ID);
      expect(subscription.createdAt).toMatch(ISO_UTC);
      expect(subscription.updatedAt).toMatch(ISO_UTC);

      const again = await t.stack.execute(Subscribe, { cardId }, t.vault1Token);
      expect(member(again.data?.subscribeCardUpdates, 'MutationSubscribeCardUpdatesSuccess').data).toEqual(
        subscription,
      );

      const read = await t.stack.execute(ReadCard, { cardId }, t.vault1Token);
      const subscribed = member(read.data?.card, 'QueryCardSuccess').data;
      expect(subscribed.updateSubscription).toEqual({
        subscriptionId: subscription.subscriptionId,
        state: 'enrolled',
      });
      expect(subscribed.metadata).toEqual({ customerId: 42 });

      const unsubscribed = await t.stack.execute(Unsubscribe, { cardId }, t.vault1Token);
      expect(
        member(unsubscribed.data?.unsubscribeCardUpdates, 'MutationUnsubscribeCardUpdatesSuccess').data,
      ).toEqual({ cardId, metadata: { customerId: 42 }, updateSubscription: null });
      const readAfter = await t.stack.execute(ReadCard, { cardId }, t.vault1Token);
      expect(member(readAfter.data?.card, 'QueryCardSuccess').data.updateSubscription).toBeNull();

      // Idempotent (gap decisions: 204 for a card that is not subscribed).
      const twice = await t.stack.execute(Unsubscribe, { cardId }, t.vault1Token);
      expect(
        member(twice.data?.unsubscribeCardUpdates, 'MutationUnsubscribeCardUpdatesSuccess').data
          .updateSubscription,
      ).toBeNull();

      const resubscribed = await t.stack.execute(Subscribe, { cardId }, t.vault1Token);
      const fresh = member(
        resubscribed.data?.subscribeCardUpdates,
        'MutationSubscribeCardUpdatesSuccess',
      ).data;
      expect(fresh.state).toBe('enrolled');
      expect(fresh.subscriptionId).not.toBe(subscription.subscriptionId);
    });

    it.each(['5100260000994002', '4000210000494002'])(
      '%s is created but its subscription answers state failed',
      async (pan) => {
        const card = await createCard(pan);
        expect(card).toMatchObject({ bin: pan.slice(0, 6), last4: '4002', updateSubscription: null });
        const result = await t.stack.execute(Subscribe, { cardId: card.cardId }, t.vault1Token);
        const subscription = member(
          result.data?.subscribeCardUpdates,
          'MutationSubscribeCardUpdatesSuccess',
        ).data;
        expect(subscription.state).toBe('failed');
        expect(subscription.subscriptionId).toMatch(SUBSCRIPTION_ID);
        const read = await t.stack.execute(ReadCard, { cardId: card.cardId }, t.vault1Token);
        expect(member(read.data?.card, 'QueryCardSuccess').data.updateSubscription).toBeNull();
      },
    );

    it('answers CardNotFoundError for a card of another vault', async () => {
      const card = await createCard(VISA);
      const subscribe = await t.stack.execute(Subscribe, { cardId: card.cardId }, t.vault2Token);
      expect(member(subscribe.data?.subscribeCardUpdates, 'CardNotFoundError').code).toBe('card-not-found');
      const unsubscribe = await t.stack.execute(Unsubscribe, { cardId: card.cardId }, t.vault2Token);
      expect(member(unsubscribe.data?.unsubscribeCardUpdates, 'CardNotFoundError').code).toBe(
        'card-not-found',
      );
      const check = await t.stack.execute(CheckUpdates, { cardId: card.cardId }, t.vault2Token);
      expect(member(check.data?.checkCardUpdates, 'CardNotFoundError').code).toBe('card-not-found');
    });

    it('answers CardBrandNotSupportedError when subscribing a Diners Club card', async () => {
      const card = await createCard(DINERS);
      expect(card).toMatchObject({ bin: '362272', last4: '1667', brand: 'diners' });
      const result = await t.stack.execute(Subscribe, { cardId: card.cardId }, t.vault1Token);
      expect(result.errors).toBeUndefined();
      expect(result.data?.subscribeCardUpdates.__typename).toBe('CardBrandNotSupportedError');
      expect((result.data?.subscribeCardUpdates as { code?: string } | undefined)?.code).toBe(
        'card-brand-not-supported',
      );
    });
  });

  describe('checkCardUpdates (contract §5.3)', () => {
    it.each(CHECK_CARDS_VISA_MASTERCARD)('%s answers %s without subscription', async (pan, event, update) => {
      const card = await createCard(pan);
      const result = await t.stack.execute(CheckUpdates, { cardId: card.cardId }, t.vault1Token);
      const updates = member(result.data?.checkCardUpdates, 'MutationCheckCardUpdatesSuccess').data;
      expect(updates.event).toBe(event);
      if (update === 'number') {
        expect(updates.updatedValues).toEqual([
          { fieldName: 'pan', oldValue: masked(pan), newValue: masked(replacementPan(pan)) },
        ]);
      } else if (update === 'expiry') {
        expect(updates.updatedValues).toEqual([{ fieldName: 'exp_year', oldValue: '29', newValue: '32' }]);
      } else {
        expect(updates.updatedValues).toEqual([]);
      }
      const text = JSON.stringify(result);
      expect(text).not.toContain(pan);
      expect(text).not.toContain(replacementPan(pan));
    });

    it.each(CHECK_CARDS_AMEX_DISCOVER)(
      '%s answers AccountUpdaterNotSupportedError until subscribed, then %s',
      async (pan, event, update) => {
        const card = await createCard(pan);
        const before = await t.stack.execute(CheckUpdates, { cardId: card.cardId }, t.vault1Token);
        expect(member(before.data?.checkCardUpdates, 'AccountUpdaterNotSupportedError').code).toBe(
          'account-updater-not-supported',
        );

        const subscribed = await t.stack.execute(Subscribe, { cardId: card.cardId }, t.vault1Token);
        expect(
          member(subscribed.data?.subscribeCardUpdates, 'MutationSubscribeCardUpdatesSuccess').data.state,
        ).toBe('enrolled');

        const after = await t.stack.execute(CheckUpdates, { cardId: card.cardId }, t.vault1Token);
        const updates = member(after.data?.checkCardUpdates, 'MutationCheckCardUpdatesSuccess').data;
        expect(updates).toEqual({
          event,
          updatedValues:
            update === 'number'
              ? [{ fieldName: 'pan', oldValue: masked(pan), newValue: masked(replacementPan(pan)) }]
              : [],
        });
        if (update === 'number') expect(masked(pan)).toMatch(/^\d{6}\*{6}\d{4}$/);
        const text = JSON.stringify([before, after]);
        expect(text).not.toContain(pan);
        expect(text).not.toContain(replacementPan(pan));

        const unsubscribed = await t.stack.execute(Unsubscribe, { cardId: card.cardId }, t.vault1Token);
        expect(unsubscribed.data?.unsubscribeCardUpdates.__typename).toBe(
          'MutationUnsubscribeCardUpdatesSuccess',
        );
        const afterUnsubscribe = await t.stack.execute(CheckUpdates, { cardId: card.cardId }, t.vault1Token);
        expect(member(afterUnsubscribe.data?.checkCardUpdates, 'AccountUpdaterNotSupportedError').code).toBe(
          'account-updater-not-supported',
        );
      },
    );

    it('answers valid with no change for a normal card', async () => {
      const card = await createCard(MASTERCARD);
      const result = await t.stack.execute(CheckUpdates, { cardId: card.cardId }, t.vault1Token);
      expect(member(result.data?.checkCardUpdates, 'MutationCheckCardUpdatesSuccess').data).toEqual({
        event: 'valid',
        updatedValues: [],
      });
    });
  });

  describe('upstream faults (contract §5.4)', () => {
    it.each(FAULT_CARDS)('%s answers UpstreamError %i %s', async (pan, status, code, retryable) => {
      const before = t.stack.sandbox!.requests().length;
      const result = await t.stack.execute(
        CreateCard,
        { input: { pan, cvc: CVC, expMonth: 11, expYear: 29 } },
        t.vault1Token,
      );
      expect(result.errors).toBeUndefined();
      const error = member(result.data?.createCard, 'UpstreamError');
      expect(error).toMatchObject({ code, status, retryable });
      expect(error.message.length).toBeGreaterThan(0);
      const text = JSON.stringify(result);
      expect(text).not.toContain(pan);
      expect(text).not.toContain(CVC);
      // POST /cards is never retried automatically, except once after a 401 with a fresh token.
      const posts = t.stack
        .sandbox!.requests()
        .slice(before)
        .filter((r) => r.method === 'POST' && r.path === '/card-interface/cards');
      expect(posts.map((r) => r.status)).toEqual(status === 401 ? [401, 401] : [status]);
    });
  });
});

describe('card interface through GraphQL, upstream that does not answer', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({ UPSTREAM_TIMEOUT_MS: '500' });
    token = await stack.token({ vaults: [VAULT1] });
  });
  afterAll(() => stack.stop());

  it('5100260000794998 answers UpstreamError upstream-timeout, retryable, with no status', async () => {
    const started = Date.now();
    const result = await stack.execute(
      CreateCard,
      { input: { pan: '5100260000794998', expMonth: 11, expYear: 29 } },
      token,
    );
    expect(result.errors).toBeUndefined();
    expect(member(result.data?.createCard, 'UpstreamError')).toMatchObject({
      code: 'upstream-timeout',
      retryable: true,
      status: null,
    });
    // undici checks its timeouts on a timer of about 1 s resolution.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(JSON.stringify(result)).not.toContain('5100260000794998');
  });
});
