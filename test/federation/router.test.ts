import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayRuntime } from '@graphql-hive/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Customer, startCustomersSubgraph } from '../../examples/customers/server.ts';
import { CreateCard } from '../support/documents.ts';
import { composeWithCustomers } from '../support/federation.ts';
import {
  BULK_BIN_BRANDS,
  BULK_TEST_PANS,
  member,
  notification,
  postGraphql,
  postNotification,
  sandboxRequestsDuring,
  useStack,
} from '../support/fixtures.ts';
import { openSse, readEvents } from '../support/sse.ts';

/**
 * cardgraph through a real router (issue 22 item 3): Hive Gateway on the supergraph composed from
 * cardgraph (`FEDERATION=on`, embedded sandbox) and the example customers subgraph, all on free
 * ports. One query goes customer → card → account updater state → card attributes for 25 customers
 * with one `_entities` request to cardgraph and one upstream read per card and per BIN; the client's
 * `Authorization` reaches cardgraph through the router; a `cardEvents` subscription through the
 * router (SSE from the client, the router's HTTP transport to cardgraph) delivers an `au_card.*`
 * event sent as a signed webhook.
 */

const SUBSCRIBE = `
  mutation Subscribe($cardId: String!) {
    subscribeCardUpdates(cardId: $cardId) {
      __typename
      ... on MutationSubscribeCardUpdatesSuccess { data { subscriptionId state } }
    }
  }
`;

const CUSTOMER_CARDS = `
  query CustomerCards {
    customers(first: 25) {
      id
      name
      card {
        cardId
        last4
        updateSubscription { subscriptionId state }
        attributes { bin brand }
      }
    }
  }
`;

const CARD_PATH = '/card-interface/cards/';
const ATTRIBUTES_PATH = '/card-attributes/attributes/attributes';

/** A subgraph request the router sent: which subgraph, the operation text and its headers. */
interface SubgraphFetch {
  /** The address without its query string. */
  url: string;
  method: string;
  accept: string | null;
  query: string;
  authorization: string | null;
  requestId: string | null;
}

describe('cardgraph and the customers subgraph behind Hive Gateway', () => {
  // The card read cache is off: the counts below are the per-request loaders' reads.
  const t = useStack({ FEDERATION: 'on', CARD_CACHE_TTL_MS: '0' });
  let router: { url: string; server: Server; dispose(): Promise<void> };
  let customers: { url: string; server: Server };
  let fetches: SubgraphFetch[];
  /** Customers C01…C25, each with one bulk card; every odd one subscribed to card updates. */
  let stored: (Customer & { pan: string; subscriptionId: string | null })[];

  beforeAll(async () => {
    stored = [];
    for (const [index, pan] of BULK_TEST_PANS.entries()) {
      const created = await t.stack.execute(
        CreateCard,
        { input: { pan, expMonth: 12, expYear: 30 } },
        t.vault1Token,
      );
      const cardId = member(created.data?.createCard, 'MutationCreateCardSuccess').data.cardId;
      let subscriptionId: string | null = null;
      if (index % 2 === 1) {
        const subscribed = await postGraphql(
          t.stack.url,
          { query: SUBSCRIBE, variables: { cardId } },
          t.vault1Token,
        );
        const result = (
          subscribed.body.data as { subscribeCardUpdates: { data: { subscriptionId: string } } }
        ).subscribeCardUpdates;
        subscriptionId = result.data.subscriptionId;
      }
      const id = `C${String(index + 1).padStart(2, '0')}`;
      stored.push({ id, name: `Customer ${id}`, cardId, pan, subscriptionId });
    }
    customers = await startCustomersSubgraph(stored.map(({ id, name, cardId }) => ({ id, name, cardId })));

    const supergraph = await composeWithCustomers(`${t.stack.url}/graphql`, customers.url);
    fetches = [];
    const gateway = createGatewayRuntime({
      supergraph,
      logging: false,
      graphiql: false,
      landingPage: false,
      // What a platform team configures (docs/supergraph.md): the client's token and
      // request id reach every subgraph.
      propagateHeaders: {
        fromClientToSubgraphs: ({ request }) => ({
          authorization: request.headers.get('authorization'),
          'x-request-id': request.headers.get('x-request-id'),
        }),
      },
      plugins: () => [
        {
          onFetch({ url, options }) {
            const headers = new Headers(options.headers as HeadersInit);
            const body =
              typeof options.body === 'string' ? (JSON.parse(options.body) as { query?: string }) : {};
            // Subscriptions go as GET with the operation in the query string (SSE).
            const target = new URL(url);
            fetches.push({
              url: `${target.origin}${target.pathname}`,
              method: options.method ?? 'GET',
              accept: headers.get('accept'),
              query: body.query ?? target.searchParams.get('query') ?? '',
              authorization: headers.get('authorization'),
              requestId: headers.get('x-request-id'),
            });
          },
        },
      ],
    });
    const server = createServer(gateway);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    router = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      server,
      dispose: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await gateway.dispose();
      },
    };
  });

  afterAll(async () => {
    await router?.dispose();
    customers?.server.closeAllConnections();
    await new Promise((resolve) => customers?.server.close(resolve));
  });

  const withRequests = <T>(work: () => Promise<T>) => sandboxRequestsDuring(t.stack, work);

  it('joins 25 customers to their cards, update subscriptions and attributes in one request', async () => {
    fetches.length = 0;
    const { result, requests } = await withRequests(() =>
      postGraphql(router.url, { query: CUSTOMER_CARDS }, t.vault1Token, { 'x-request-id': 'router-test-1' }),
    );
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      data: {
        customers: stored.map((customer) => ({
          id: customer.id,
          name: customer.name,
          card: {
            cardId: customer.cardId,
            last4: customer.pan.slice(-4),
            updateSubscription: customer.subscriptionId
              ? { subscriptionId: customer.subscriptionId, state: 'enrolled' }
              : null,
            attributes: { bin: customer.pan.slice(0, 6), brand: BULK_BIN_BRANDS[customer.pan.slice(0, 6)] },
          },
        })),
      },
    });

    // The router asked each subgraph once: the customers, then all 25 cards in one `_entities`.
    expect(fetches.map((fetch) => fetch.url)).toEqual([customers.url, `${t.stack.url}/graphql`]);
    expect(fetches[1]!.query).toContain(
      '{_entities(representations:$representations){__typename ...on Card{',
    );
    // The client's token and request id reached cardgraph.
    expect(fetches[1]!.authorization).toBe(`Bearer ${t.vault1Token}`);
    expect(fetches[1]!.requestId).toBe('router-test-1');

    // cardgraph read each card once and each BIN once, with the vault of the client's token.
    const cardReads = requests.filter((r) => r.method === 'GET' && r.path.startsWith(CARD_PATH));
    expect(cardReads.map((r) => r.path).sort()).toEqual(stored.map((c) => `${CARD_PATH}${c.cardId}`).sort());
    expect(requests.filter((r) => r.method === 'POST' && r.path === ATTRIBUTES_PATH)).toHaveLength(5);
    expect(requests).toHaveLength(25 + 5);
    expect(new Set(requests.map((r) => r.vault))).toEqual(new Set(['tntsandbox1']));
  });

  it("answers null cards for a token of another vault, never the other vault's data", async () => {
    const { result, requests } = await withRequests(() =>
      postGraphql(router.url, { query: CUSTOMER_CARDS }, t.vault2Token),
    );
    const answered = (result.body.data as { customers: { id: string; card: unknown }[] }).customers;
    expect(answered).toEqual(stored.map(({ id, name }) => ({ id, name, card: null })));
    // cardgraph answered each reference null: the router nulls the nullable `card` for its first
    // non-null field, with the router's own (masked) error there, no cardgraph data.
    const errors = result.body.errors as { path: unknown[]; message: string; extensions: unknown }[];
    expect(errors.map((error) => [error.path, error.message, error.extensions])).toEqual(
      stored.map((_customer, index) => [
        ['customers', index, 'card', 'last4'],
        'Unexpected error.',
        { code: 'INTERNAL_SERVER_ERROR' },
      ]),
    );
    expect(new Set(requests.map((r) => r.vault))).toEqual(new Set(['tntsandbox2']));
  });

  it('delivers a card event from a signed au_card webhook to a cardEvents subscription through the router', async () => {
    const card = stored[0]!;
    fetches.length = 0;
    const stream = await openSse(
      router.url,
      {
        query: `subscription Events($cardId: String) {
          cardEvents(cardId: $cardId) { id tenant type source cardId newAccountNumber }
        }`,
        variables: { cardId: card.cardId },
      },
      t.vault1Token,
    );
    expect(stream.status).toBe(200);
    // The router opened the subscription at cardgraph with the client's token.
    await expect.poll(() => t.stack.app.events?.subscriberCount('tntsandbox1') ?? 0).toBe(1);

    const subscribe = fetches.find((fetch) => fetch.query.includes('cardEvents'));
    // Hive Gateway's HTTP transport subscribes over SSE (GET, text/event-stream): no WebSocket needed.
    expect(subscribe).toMatchObject({ url: `${t.stack.url}/graphql`, method: 'GET' });
    expect(subscribe?.accept).toContain('text/event-stream');
    expect(subscribe?.authorization).toBe(`Bearer ${t.vault1Token}`);

    const sent = notification({ cardId: card.cardId!, event: 'au_card.updated' });
    expect((await postNotification(t.stack.url, sent)).status).toBe(200);
    const [event] = await readEvents(stream, 1);
    stream.close();
    // The client went away: the router ends its subscription at cardgraph.
    await expect.poll(() => t.stack.app.events?.subscriberCount('tntsandbox1') ?? 0).toBe(0);
    expect(event?.event).toBe('next');
    expect(JSON.parse(event!.data)).toEqual({
      data: {
        cardEvents: {
          id: sent.id,
          tenant: 'tntsandbox1',
          type: 'UPDATED',
          source: 'ACCOUNT_UPDATER',
          cardId: card.cardId,
          newAccountNumber: '510026******1001',
        },
      },
    });
  });
});
