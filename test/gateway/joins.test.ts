import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { SandboxRequestRecord } from '../../src/sandbox/sandbox.ts';
import { graphql } from '../generated/index.ts';
import { EnrolCard, ProvisionToken } from '../support/documents.ts';
import {
  BULK_BIN_BRANDS,
  BULK_TEST_PANS,
  member,
  sandboxRequestsDuring,
  useStack,
} from '../support/fixtures.ts';
import { DOCUMENTED } from '../support/wire.ts';

/** Whether the stack's sandbox answers in the documented wire (`SANDBOX_WIRE`, its default). */
const DOCUMENTED_WIRE = process.env.SANDBOX_WIRE !== 'specification';

/**
 * The joins of the graph through the gateway's GraphQL API over HTTP against the embedded sandbox,
 * and the number of upstream requests they cost (issue "Done when": no N+1):
 * `AccountUpdaterCard.networkToken` and `.attributes`, `Card.attributes` and `.updateSubscription`,
 * `NetworkToken.attributes`, `node`/`nodes` across vaults. Each card, token and BIN is read at most
 * once per GraphQL request (per-request DataLoaders), and a BIN at most once across requests (the
 * app-wide BIN cache). `OrganizationMember.vaults` is covered by organization.test.ts, `CardEvent.card`
 * by card-events.test.ts.
 */

const States = graphql(`
  query IT4_JN_States($ids: [ID!]!) {
    nodes(ids: $ids) { __typename ... on AccountUpdaterCard { cardId state } }
  }
`);

const JoinedNodes = graphql(`
  query IT4_JN_JoinedNodes($ids: [ID!]!) {
    nodes(ids: $ids) {
      __typename
      ... on AccountUpdaterCard { cardId networkToken { state } attributes { brand } }
    }
  }
`);

const TokenState = graphql(`
  query IT4_JN_TokenState($panAlias: String!) {
    networkToken(panAlias: $panAlias) {
      __typename
      ... on QueryNetworkTokenSuccess { data { state networkTokenLast4 } }
      ...ErrorFields
    }
  }
`);

const TokenWithAttributes = graphql(`
  query IT4_JN_TokenWithAttributes($panAlias: String!) {
    networkToken(panAlias: $panAlias) {
      __typename
      ... on QueryNetworkTokenSuccess { data { panAlias cardBin attributes { bin brand cardType } } }
      ...ErrorFields
    }
  }
`);

const AccountUpdaterCard = graphql(`
  query IT4_JN_AccountUpdaterCard($cardId: String!) {
    accountUpdaterCard(cardId: $cardId) {
      __typename
      ... on QueryAccountUpdaterCardSuccess {
        data {
          cardId
          number
          networkToken { panAlias vaultId state usable networkTokenLast4 cardBin cardLast4 cardExpiresAt }
          attributes { bin brand issuingOrganization cardType cardCategory issuingCountryCode version }
        }
      }
      ...ErrorFields
    }
  }
`);

const CreateCard = graphql(`
  mutation IT4_JN_CreateCard($input: CreateCardInput!, $vaultId: String) {
    createCard(input: $input, vaultId: $vaultId) {
      __typename
      ... on MutationCreateCardSuccess {
        data {
          id
          cardId
          panAlias
          bin
          attributes { bin brand cardType cardCategory prepaidType }
          updateSubscription { subscriptionId state }
        }
      }
      ...ErrorFields
    }
  }
`);

const ReadCard = graphql(`
  query IT4_JN_ReadCard($cardId: String!) {
    card(cardId: $cardId) {
      __typename
      ... on QueryCardSuccess { data { cardId updateSubscription { subscriptionId state } } }
      ...ErrorFields
    }
  }
`);

const Subscribe = graphql(`
  mutation IT4_JN_Subscribe($cardId: String!) {
    subscribeCardUpdates(cardId: $cardId) {
      __typename
      ... on MutationSubscribeCardUpdatesSuccess { data { subscriptionId state } }
      ...ErrorFields
    }
  }
`);

const Unsubscribe = graphql(`
  mutation IT4_JN_Unsubscribe($cardId: String!) {
    unsubscribeCardUpdates(cardId: $cardId) {
      __typename
      ... on MutationUnsubscribeCardUpdatesSuccess { data { cardId updateSubscription { subscriptionId state } } }
      ...ErrorFields
    }
  }
`);

const LookupAttributes = graphql(`
  query IT4_JN_LookupAttributes($number: String!) {
    cardAttributes(number: $number) {
      __typename
      ... on QueryCardAttributesSuccess { data { bin brand cardType cardCategory prepaidType } }
      ...ErrorFields
    }
  }
`);

const NodesOfCards = graphql(`
  query IT4_JN_NodesOfCards($ids: [ID!]!) {
    nodes(ids: $ids) {
      __typename
      id
      ... on Card { cardId vaultId attributes { bin brand } }
      ... on AccountUpdaterCard { cardId vaultId attributes { bin brand } }
    }
  }
`);

const NodeOfCard = graphql(`
  query IT4_JN_NodeOfCard($id: ID!) {
    node(id: $id) { __typename id ... on Card { cardId vaultId bin } }
  }
`);

/** How many times each value occurs. */
function counts(values: readonly string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const value of values) map.set(value, (map.get(value) ?? 0) + 1);
  return map;
}

const VAULT1 = 'tntsandbox1';
const VAULT2 = 'tntsandbox2';
const ATTRIBUTES_PATH = '/card-attributes/attributes/attributes';
const CARD_PATH = '/account-updater/cards/';
const TOKEN_PATH = '/account-updater/network-tokens/';

describe('joins through GraphQL', () => {
  // The app-wide card read cache is off here: these tests count the per-request DataLoader reads
  // (test/gateway/card-read-cache.test.ts covers the cache).
  const t = useStack({ CARD_CACHE_TTL_MS: '0' });

  const withRequests = <T>(work: () => Promise<T>) => sandboxRequestsDuring(t.stack, work);

  /** Enrols `pan` in vault 1 (expiry 12/30). */
  async function enrol(pan: string, name = 'Bulk Holder') {
    const result = await t.stack.execute(
      EnrolCard,
      { input: { name, number: pan, expMonth: 12, expYear: 30 } },
      t.vault1Token,
    );
    return member(result.data?.enrollAccountUpdaterCard, 'MutationEnrollAccountUpdaterCardSuccess').data;
  }

  /** Provisions a token for `panAlias` (expiry 12/30) and waits until it reached its final state. */
  async function provisionAndWait(panAlias: string, timeoutMs = 3_000) {
    const provisioned = await t.stack.execute(
      ProvisionToken,
      { input: { panAlias, expMonth: 12, expYear: 30 } },
      t.vault1Token,
    );
    // Pending in the specification's reading; already final in the documented one (contract §8).
    const first = member(
      provisioned.data?.provisionNetworkToken,
      'MutationProvisionNetworkTokenSuccess',
    ).data;
    if (DOCUMENTED) expect(first.state).not.toBe('PENDING');
    else expect(first.state).toBe('PENDING');
    return vi.waitFor(
      async () => {
        const read = await t.stack.execute(TokenState, { panAlias }, t.vault1Token);
        const token = member(read.data?.networkToken, 'QueryNetworkTokenSuccess').data;
        expect(token.state).not.toBe('PENDING');
        return token;
      },
      { timeout: timeoutMs, interval: 20 },
    );
  }

  // First: the BIN cache is app-wide, and the tests after this one fill it.
  describe('N+1: one nodes query over 25 enrolled cards', () => {
    interface BulkCard {
      pan: string;
      id: string;
      cardId: string;
      number: string;
      hasToken: boolean;
    }
    let cards: BulkCard[];

    beforeAll(async () => {
      expect(BULK_TEST_PANS).toHaveLength(25);
      const enrolled = await Promise.all(BULK_TEST_PANS.map((pan) => enrol(pan)));
      cards = enrolled.map((card, index) => ({
        pan: BULK_TEST_PANS[index]!,
        id: card.id,
        cardId: card.cardId,
        number: card.number,
        // Tokens for every other card, so the query meets both a token and none.
        hasToken: index % 2 === 0,
      }));

      const ids = cards.map((card) => card.id);
      await vi.waitFor(
        async () => {
          const states = await t.stack.execute(States, { ids }, t.vault1Token);
          expect(states.errors).toBeUndefined();
          const nodes = states.data?.nodes ?? [];
          expect(
            nodes.map((node) => (node?.__typename === 'AccountUpdaterCard' ? node.state : null)),
          ).toEqual(ids.map(() => 'ENROLLED'));
        },
        { timeout: 5_000, interval: 25 },
      );

      const tokens = await Promise.all(
        cards.filter((card) => card.hasToken).map((card) => provisionAndWait(card.number)),
      );
      expect(tokens.map((token) => token.state)).toEqual(Array.from({ length: 13 }, () => 'ACTIVE'));
    });

    /** What the joined query must answer for the bulk cards. */
    const expectedNodes = (selected: readonly BulkCard[]) =>
      selected.map((card) => ({
        __typename: 'AccountUpdaterCard',
        cardId: card.cardId,
        networkToken: card.hasToken ? { state: 'ACTIVE' } : null,
        attributes: { brand: BULK_BIN_BRANDS[card.pan.slice(0, 6)] },
      }));

    /** Sorted request paths of one kind. */
    const pathsOf = (requests: readonly SandboxRequestRecord[], method: string, prefix: string) =>
      requests
        .filter((r) => r.method === method && r.path.startsWith(prefix))
        .map((r) => r.path)
        .sort();

    it('reads each card and each token once, and each BIN once across requests', async () => {
      const ids = cards.map((card) => card.id);
      const distinctBins = new Set(cards.map((card) => card.pan.slice(0, 6)));
      expect(distinctBins.size).toBe(5);

      const first = await withRequests(() => t.stack.execute(JoinedNodes, { ids }, t.vault1Token));
      expect(first.result.errors).toBeUndefined();
      expect(first.result.data?.nodes).toEqual(expectedNodes(cards));

      const cardPaths = cards.map((card) => `${CARD_PATH}${card.cardId}`).sort();
      const tokenPaths = cards.map((card) => `${TOKEN_PATH}${card.number}`).sort();
      expect(new Set(tokenPaths).size).toBe(25);
      expect(pathsOf(first.requests, 'GET', CARD_PATH)).toEqual(cardPaths);
      expect(pathsOf(first.requests, 'GET', TOKEN_PATH)).toEqual(tokenPaths);
      // A card without a token is one 404, not a retry or a second read.
      for (const card of cards) {
        const read = first.requests.filter((r) => r.path === `${TOKEN_PATH}${card.number}`);
        expect(read.map((r) => r.status)).toEqual([card.hasToken ? 200 : 404]);
      }
      // The cache was cold for these BINs: exactly one lookup per distinct BIN.
      expect(pathsOf(first.requests, 'POST', ATTRIBUTES_PATH)).toHaveLength(distinctBins.size);
      expect(first.requests).toHaveLength(25 + 25 + distinctBins.size);

      // A new request: new per-request loaders, the same app-wide BIN cache.
      const second = await withRequests(() => t.stack.execute(JoinedNodes, { ids }, t.vault1Token));
      expect(second.result).toEqual(first.result);
      expect(pathsOf(second.requests, 'POST', ATTRIBUTES_PATH)).toEqual([]);
      expect(pathsOf(second.requests, 'GET', CARD_PATH)).toEqual(cardPaths);
      expect(pathsOf(second.requests, 'GET', TOKEN_PATH)).toEqual(tokenPaths);
      expect(second.requests).toHaveLength(25 + 25);
    });

    it('reads a card asked for twice in one request once', async () => {
      const selected = [...cards.slice(0, 5), ...cards.slice(0, 5)];
      const { result, requests } = await withRequests(() =>
        t.stack.execute(JoinedNodes, { ids: selected.map((card) => card.id) }, t.vault1Token),
      );
      expect(result.data?.nodes).toEqual(expectedNodes(selected));
      expect([...counts(pathsOf(requests, 'GET', CARD_PATH)).values()]).toEqual([1, 1, 1, 1, 1]);
      expect([...counts(pathsOf(requests, 'GET', TOKEN_PATH)).values()]).toEqual([1, 1, 1, 1, 1]);
      expect(requests).toHaveLength(10);
    });
  });

  describe('AccountUpdaterCard.networkToken and .attributes, NetworkToken.attributes', () => {
    it("joins the token of the enrolled card's number alias: null before provisioning, then the token", async () => {
      const pan = '5100260000895001';
      const enrolled = await enrol(pan, 'Ada Lovelace');
      const before = await t.stack.execute(AccountUpdaterCard, { cardId: enrolled.cardId }, t.vault1Token);
      const card = member(before.data?.accountUpdaterCard, 'QueryAccountUpdaterCardSuccess').data;
      expect(card.networkToken).toBeNull();
      expect(card.attributes).toEqual({
        bin: '510026',
        brand: 'MASTERCARD',
        issuingOrganization: 'Cardgraph Sandbox Bank',
        cardType: 'CREDIT',
        cardCategory: 'STANDARD',
        // The documented answer's alpha-3, the specification's alpha-2 (passed through as sent).
        issuingCountryCode: DOCUMENTED_WIRE ? 'USA' : 'US',
        version: 20261101,
      });

      const token = await provisionAndWait(enrolled.number);
      const after = await t.stack.execute(AccountUpdaterCard, { cardId: enrolled.cardId }, t.vault1Token);
      expect(member(after.data?.accountUpdaterCard, 'QueryAccountUpdaterCardSuccess').data).toEqual({
        ...card,
        networkToken: {
          panAlias: enrolled.number,
          vaultId: VAULT1,
          state: 'ACTIVE',
          usable: true,
          networkTokenLast4: token.networkTokenLast4,
          cardBin: '510026',
          cardLast4: '5001',
          cardExpiresAt: '2030-12',
        },
      });

      const withAttributes = await t.stack.execute(
        TokenWithAttributes,
        { panAlias: enrolled.number },
        t.vault1Token,
      );
      expect(member(withAttributes.data?.networkToken, 'QueryNetworkTokenSuccess').data).toEqual({
        panAlias: enrolled.number,
        cardBin: '510026',
        attributes: { bin: '510026', brand: 'MASTERCARD', cardType: 'CREDIT' },
      });
      expect(JSON.stringify([before, after, withAttributes])).not.toContain(pan);
    });

    it('finds a token provisioned through the tok_ alias of the same PAN (one token per card)', async () => {
      const pan = '4000210000395001';
      const created = await t.stack.execute(
        CreateCard,
        { input: { pan, expMonth: 12, expYear: 30 } },
        t.vault1Token,
      );
      const { panAlias } = member(created.data?.createCard, 'MutationCreateCardSuccess').data;
      const token = await provisionAndWait(panAlias);

      const enrolled = await enrol(pan);
      const read = await t.stack.execute(AccountUpdaterCard, { cardId: enrolled.cardId }, t.vault1Token);
      const joined = member(read.data?.accountUpdaterCard, 'QueryAccountUpdaterCardSuccess').data
        .networkToken;
      // The answer echoes the alias it was asked with (docs/gap-decisions.md "Network tokens").
      expect(joined).toMatchObject({
        panAlias: enrolled.number,
        state: 'ACTIVE',
        networkTokenLast4: token.networkTokenLast4,
        cardLast4: '5001',
      });
    });

    it('answers null attributes for a BIN the data set does not know, looked up once across requests', async () => {
      const enrolled = await enrol('4000007000000106');
      const read = () => t.stack.execute(AccountUpdaterCard, { cardId: enrolled.cardId }, t.vault1Token);
      const first = await withRequests(read);
      expect(
        member(first.result.data?.accountUpdaterCard, 'QueryAccountUpdaterCardSuccess').data.attributes,
      ).toBeNull();
      expect(first.requests.filter((r) => r.path === ATTRIBUTES_PATH)).toEqual([
        // The specification's 404, the documented 422 ("could not discern a bin"): both cached.
        { method: 'POST', path: ATTRIBUTES_PATH, status: DOCUMENTED_WIRE ? 422 : 404, vault: VAULT1 },
      ]);
      const second = await withRequests(read);
      expect(second.result).toEqual(first.result);
      expect(second.requests.filter((r) => r.path === ATTRIBUTES_PATH)).toEqual([]);
    });

    it('reports a SUSPENDED token through the join as not usable', async () => {
      const enrolled = await enrol('4000210000795002');
      expect((await provisionAndWait(enrolled.number)).state).toBe('SUSPENDED');
      const read = await t.stack.execute(AccountUpdaterCard, { cardId: enrolled.cardId }, t.vault1Token);
      expect(
        member(read.data?.accountUpdaterCard, 'QueryAccountUpdaterCardSuccess').data.networkToken,
      ).toMatchObject({ state: 'SUSPENDED', usable: false });
    });

    it('answers a join the token may not read as null with a forbidden error, the card still readable', async () => {
      const enrolled = await enrol('4111111111111111');
      for (const [scopes, field] of [
        [['cards:read', 'card-attributes:basic'], 'networkToken'],
        [['cards:read', 'network-tokens:read'], 'attributes'],
      ] as const) {
        const token = await t.stack.token({ vaults: [VAULT1], scopes });
        const { result, requests } = await withRequests(() =>
          t.stack.execute(AccountUpdaterCard, { cardId: enrolled.cardId }, token),
        );
        const card = member(result.data?.accountUpdaterCard, 'QueryAccountUpdaterCardSuccess').data;
        expect(card.cardId).toBe(enrolled.cardId);
        expect(card[field]).toBeNull();
        expect(result.errors).toHaveLength(1);
        expect(result.errors![0]).toMatchObject({
          path: ['accountUpdaterCard', 'data', field],
          extensions: { code: 'forbidden' },
        });
        // The refused join costs no upstream request.
        const refused = field === 'networkToken' ? TOKEN_PATH : ATTRIBUTES_PATH;
        expect(requests.filter((r) => r.path.startsWith(refused))).toEqual([]);
      }
    });
  });

  describe('Card.attributes, Card.updateSubscription, node(id)', () => {
    it("joins a card's attributes by its six-digit BIN", async () => {
      const created = await t.stack.execute(
        CreateCard,
        { input: { pan: '6011111111111117', expMonth: 12, expYear: 30 } },
        t.vault1Token,
      );
      expect(member(created.data?.createCard, 'MutationCreateCardSuccess').data).toMatchObject({
        bin: '601111',
        attributes: {
          bin: '601111',
          brand: 'DISCOVER',
          cardType: 'CREDIT',
          cardCategory: 'STANDARD',
          prepaidType: null,
        },
        updateSubscription: null,
      });
    });

    it('joins the six-digit row even where an 8-digit row refines it (the lookup by alias does not)', async () => {
      // The record carries the first six digits only, and the join is cached per six-digit BIN.
      const created = await t.stack.execute(
        CreateCard,
        { input: { pan: '4556001200000105', expMonth: 12, expYear: 30 } },
        t.vault1Token,
      );
      const card = member(created.data?.createCard, 'MutationCreateCardSuccess').data;
      expect(card.attributes).toEqual({
        bin: '455600',
        brand: 'VISA',
        cardType: 'CREDIT',
        cardCategory: 'GOLD',
        prepaidType: null,
      });
      const byAlias = await t.stack.execute(LookupAttributes, { number: card.panAlias }, t.vault1Token);
      expect(member(byAlias.data?.cardAttributes, 'QueryCardAttributesSuccess').data).toEqual({
        bin: '45560012',
        brand: 'VISA',
        cardType: 'DEBIT',
        cardCategory: 'PREPAID',
        prepaidType: 'RELOADABLE',
      });
    });

    it('shows the account updater subscription while subscribed, and null after unsubscribing', async () => {
      const created = await t.stack.execute(
        CreateCard,
        { input: { pan: '5555555555554444', expMonth: 12, expYear: 30 } },
        t.vault1Token,
      );
      const { cardId } = member(created.data?.createCard, 'MutationCreateCardSuccess').data;
      const subscribed = member(
        (await t.stack.execute(Subscribe, { cardId }, t.vault1Token)).data?.subscribeCardUpdates,
        'MutationSubscribeCardUpdatesSuccess',
      ).data;
      const read = await t.stack.execute(ReadCard, { cardId }, t.vault1Token);
      expect(member(read.data?.card, 'QueryCardSuccess').data).toEqual({
        cardId,
        updateSubscription: { subscriptionId: subscribed.subscriptionId, state: 'enrolled' },
      });
      const unsubscribed = await t.stack.execute(Unsubscribe, { cardId }, t.vault1Token);
      expect(
        member(unsubscribed.data?.unsubscribeCardUpdates, 'MutationUnsubscribeCardUpdatesSuccess').data,
      ).toEqual({
        cardId,
        updateSubscription: null,
      });
      const again = await t.stack.execute(ReadCard, { cardId }, t.vault1Token);
      expect(member(again.data?.card, 'QueryCardSuccess').data.updateSubscription).toBeNull();
    });

    it("answers node(id) and nodes(ids) for the caller's vault, and null for another vault's cards", async () => {
      const own = member(
        (
          await t.stack.execute(
            CreateCard,
            { input: { pan: '378282246310005', expMonth: 12, expYear: 30 } },
            t.vault1Token,
          )
        ).data?.createCard,
        'MutationCreateCardSuccess',
      ).data;
      const other = member(
        (
          await t.stack.execute(
            CreateCard,
            { input: { pan: '4242424242424242', expMonth: 12, expYear: 30 } },
            t.vault2Token,
          )
        ).data?.createCard,
        'MutationCreateCardSuccess',
      ).data;
      const enrolled = await enrol('5100260000291003');

      const { result, requests } = await withRequests(() =>
        t.stack.execute(NodesOfCards, { ids: [own.id, other.id, enrolled.id] }, t.vault1Token),
      );
      expect(result.errors).toBeUndefined();
      expect(result.data?.nodes).toEqual([
        {
          __typename: 'Card',
          id: own.id,
          cardId: own.cardId,
          vaultId: VAULT1,
          attributes: { bin: '378282', brand: 'AMERICAN EXPRESS' },
        },
        null,
        // A mock enrolment (contract §5) is never saved: its id reads as null too.
        null,
      ]);
      // Another vault's id is refused before any upstream request.
      expect(requests.filter((r) => r.path.endsWith(other.cardId))).toEqual([]);

      expect((await t.stack.execute(NodeOfCard, { id: other.id }, t.vault1Token)).data?.node).toBeNull();
      expect((await t.stack.execute(NodeOfCard, { id: other.id }, t.vault2Token)).data?.node).toEqual({
        __typename: 'Card',
        id: other.id,
        cardId: other.cardId,
        vaultId: VAULT2,
        bin: '424242',
      });
      const bothVaults = await t.stack.token({ vaults: [VAULT1, VAULT2] });
      const both = await t.stack.execute(NodesOfCards, { ids: [other.id, own.id] }, bothVaults);
      expect(both.data?.nodes?.map((node) => node && [node.__typename, node.id])).toEqual([
        ['Card', other.id],
        ['Card', own.id],
      ]);
    });
  });
});
