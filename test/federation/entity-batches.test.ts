import type { Server } from 'node:http';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { createGatewayRuntime } from '@graphql-hive/gateway';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Customer, startCustomersSubgraph } from '../../examples/customers/server.ts';
import { CreateCard } from '../support/documents.ts';
import { composeWithCustomers } from '../support/federation.ts';
import {
  BULK_BIN_BRANDS,
  BULK_TEST_PANS,
  member,
  postGraphql,
  sandboxRequestsDuring,
  useStack,
} from '../support/fixtures.ts';

/**
 * Router-sized entity batches: a page of 250 customers whose cards are 25 cardgraph cards (ten
 * customers per card) resolves every card through Hive Gateway and through Apollo Gateway (on a
 * supergraph of @apollo/composition), within cardgraph's default budget of 100 upstream calls,
 * because `_entities` is costed by the distinct representations it reads; and cardgraph answers
 * such a batch sent to it directly, reading each card once.
 */

const PAGE = `
  query CustomerPage {
    customers(first: 250) {
      id
      card { cardId last4 attributes { brand } }
    }
  }
`;

const CARD_PATH = '/card-interface/cards/';

describe('_entities batches of router pages (250 customers, 25 cards)', () => {
  // The card read cache is off: the counts below are the per-request loaders' reads.
  const t = useStack({ FEDERATION: 'on', CARD_CACHE_TTL_MS: '0' });
  let customers: { url: string; server: Server };
  let cards: { cardId: string; pan: string }[];
  let page: Customer[];

  beforeAll(async () => {
    cards = [];
    for (const pan of BULK_TEST_PANS) {
      const created = await t.stack.execute(
        CreateCard,
        { input: { pan, expMonth: 12, expYear: 30 } },
        t.vault1Token,
      );
      cards.push({ cardId: member(created.data?.createCard, 'MutationCreateCardSuccess').data.cardId, pan });
    }
    page = Array.from({ length: 250 }, (_, index) => ({
      id: `C${String(index + 1).padStart(3, '0')}`,
      name: `Customer ${index + 1}`,
      cardId: cards[index % cards.length]!.cardId,
    }));
    customers = await startCustomersSubgraph(page);
  });

  afterAll(async () => {
    customers?.server.closeAllConnections();
    await new Promise((resolve) => customers?.server.close(resolve));
  });

  /** The page as every router must answer it: each customer with its card, attributes included. */
  const expectedPage = () => ({
    customers: page.map((customer) => {
      const { pan } = cards.find((card) => card.cardId === customer.cardId)!;
      return {
        id: customer.id,
        card: {
          cardId: customer.cardId,
          last4: pan.slice(-4),
          attributes: { brand: BULK_BIN_BRANDS[pan.slice(0, 6)] },
        },
      };
    }),
  });

  /** Card reads of the sandbox among `requests`: one per distinct card. */
  const cardReadPaths = (requests: { method: string; path: string }[]) =>
    requests
      .filter((r) => r.method === 'GET' && r.path.startsWith(CARD_PATH))
      .map((r) => r.path)
      .sort();

  it('cardgraph answers 250 representations of 25 cards directly, with 25 card reads', async () => {
    const representations = page.map((customer) => ({ __typename: 'Card', cardId: customer.cardId }));
    const { result, requests } = await sandboxRequestsDuring(t.stack, () =>
      postGraphql(
        t.stack.url,
        {
          query: `query Entities($representations: [_Any!]!) {
            _entities(representations: $representations) { ... on Card { cardId } }
          }`,
          variables: { representations },
        },
        t.vault1Token,
      ),
    );
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      data: { _entities: page.map((customer) => ({ cardId: customer.cardId })) },
    });
    expect(cardReadPaths(requests)).toEqual(cards.map((card) => `${CARD_PATH}${card.cardId}`).sort());
  });

  it('Hive Gateway resolves every card of the page', async () => {
    const supergraph = await composeWithCustomers(`${t.stack.url}/graphql`, customers.url);
    const representationCounts: number[] = [];
    const gateway = createGatewayRuntime({
      supergraph,
      logging: false,
      graphiql: false,
      landingPage: false,
      propagateHeaders: {
        fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') }),
      },
      plugins: () => [
        {
          onFetch({ options }) {
            const body = typeof options.body === 'string' ? JSON.parse(options.body) : {};
            const sent = body.variables?.representations;
            if (Array.isArray(sent)) representationCounts.push(sent.length);
          },
        },
      ],
    });
    try {
      const { result, requests } = await sandboxRequestsDuring(t.stack, async () => {
        const response = await gateway.fetch('http://router.internal/graphql', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${t.vault1Token}`,
          },
          body: JSON.stringify({ query: PAGE }),
        });
        return response.json();
      });
      expect(result).toEqual({ data: expectedPage() });
      // One entity fetch for the whole page; cardgraph read each card once.
      expect(representationCounts).toHaveLength(1);
      expect(cardReadPaths(requests)).toEqual(cards.map((card) => `${CARD_PATH}${card.cardId}`).sort());
    } finally {
      await gateway.dispose();
    }
  });

  it('Apollo Gateway (supergraph of @apollo/composition) resolves every card of the page', async () => {
    const supergraphSdl = await composeWithCustomers(`${t.stack.url}/graphql`, customers.url, 'apollo');
    const representationCounts: number[] = [];
    const gateway = new ApolloGateway({
      supergraphSdl,
      buildService: ({ url }) =>
        new RemoteGraphQLDataSource<{ authorization: string }>({
          url,
          // What a platform team configures: the client's token reaches every subgraph.
          willSendRequest({ request, context }) {
            request.http?.headers.set('authorization', context.authorization);
            const sent = request.variables?.representations;
            if (Array.isArray(sent)) representationCounts.push(sent.length);
          },
        }),
    });
    const { executor } = await gateway.load();
    try {
      const document = parse(PAGE);
      const { result, requests } = await sandboxRequestsDuring(t.stack, () =>
        // What Apollo Server hands the gateway for one request.
        executor({
          request: { query: PAGE, operationName: 'CustomerPage' },
          document,
          source: PAGE,
          queryHash: 'customer-page',
          operationName: 'CustomerPage',
          context: { authorization: `Bearer ${t.vault1Token}` },
          logger: console,
          metrics: {},
          cache: undefined,
          overallCachePolicy: undefined,
        } as never),
      );
      expect(result).toEqual({ data: expectedPage() });
      expect(representationCounts).toHaveLength(1);
      expect(cardReadPaths(requests)).toEqual(cards.map((card) => `${CARD_PATH}${card.cardId}`).sort());
    } finally {
      await gateway.stop();
    }
  });
});
