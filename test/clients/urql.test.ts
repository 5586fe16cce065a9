import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccountUpdaterCardByIdDocument,
  EnrolCardWithWebhookDocument,
  LiveCardEventsDocument,
  urqlSchema,
} from '../../src/client/generated/index.ts';
import { member, type Stack, startStack, waitForSubscribers } from '../support/fixtures.ts';

/**
 * Types without an `id` (result wrappers, errors, connections, expiry, …) have no key: graphcache
 * embeds them in their parent. Node types (Card, AccountUpdaterCard, …) are normalized by `id`.
 */
const embeddedTypes = Object.fromEntries(
  urqlSchema.__schema.types
    .filter((type) => type.kind === 'OBJECT' && !type.fields.some((field) => field.name === 'id'))
    .map((type) => [type.name, () => null]),
);

describe('urql with graphcache and the generated documents', () => {
  let stack: Stack;
  let token: string;
  let client: Client;
  beforeAll(async () => {
    stack = await startStack();
    token = await stack.token();
    const ws = stack.wsClient(token);
    client = new Client({
      url: `${stack.url}/graphql`,
      fetchOptions: { headers: { authorization: `Bearer ${token}` } },
      exchanges: [
        // With the schema graphcache matches `... on Error` in result unions exactly.
        cacheExchange({ schema: urqlSchema, keys: embeddedTypes }),
        fetchExchange,
        subscriptionExchange({
          forwardSubscription: (request) => ({
            subscribe: (sink) => ({
              unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink),
            }),
          }),
        }),
      ],
    });
  });
  afterAll(() => stack.stop());

  it('receives code and message of a typed error', async () => {
    const result = await client
      .query(AccountUpdaterCardByIdDocument, { cardId: 'CRD0000000000000000000000' })
      .toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data?.accountUpdaterCard).toEqual({
      __typename: 'CardNotFoundError',
      code: 'card-not-found',
      message: 'Card CRD0000000000000000000000 was not found in this vault',
    });
  });

  it('receives a live au_card.* event over graphql-ws and reads the normal card back', async () => {
    const events: unknown[] = [];
    const { unsubscribe } = client
      .subscription(LiveCardEventsDocument, {})
      .subscribe((result) => events.push(result.data?.cardEvents));
    try {
      await waitForSubscribers(stack.app, 'tntsandbox1', 1);
      const enrolled = await client
        .mutation(EnrolCardWithWebhookDocument, { number: '4242424242424242' })
        .toPromise();
      const { cardId } = member(
        enrolled.data?.enrollAccountUpdaterCard,
        'MutationEnrollAccountUpdaterCardSuccess',
      ).data;
      await expect
        .poll(() => events, { timeout: 5_000 })
        .toContainEqual(expect.objectContaining({ type: 'ENROLLED', cardId }));
      const read = await client
        .query(AccountUpdaterCardByIdDocument, { cardId }, { requestPolicy: 'network-only' })
        .toPromise();
      expect(member(read.data?.accountUpdaterCard, 'QueryAccountUpdaterCardSuccess').data.cardId).toBe(
        cardId,
      );
    } finally {
      unsubscribe();
    }
  });
});
