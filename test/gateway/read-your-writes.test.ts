import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { createSandbox, type Sandbox } from '../../src/sandbox/sandbox.ts';
import { postGraphql, remoteUpstreamEnv, type Stack, startStack, testToken } from '../support/fixtures.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

/**
 * Read-your-writes across replicas (issue 20 item 2): two gateways on one Redis and one upstream, the
 * card read cache on (`CARD_CACHE_TTL_MS` 5 min, the default). A mutation that changes a card through
 * one replica drops that card's cached reads on the other at once (Redis pub/sub), so a read through
 * either replica right after the mutation's answer sees the change.
 */

const CREATE_CARD = `mutation RYW_Create($input: CreateCardInput!) {
  createCard(input: $input) { __typename ... on MutationCreateCardSuccess { data { cardId } } }
}`;
const SUBSCRIBE = `mutation RYW_Subscribe($cardId: String!) {
  subscribeCardUpdates(cardId: $cardId) {
    __typename ... on MutationSubscribeCardUpdatesSuccess { data { subscriptionId state } }
  }
}`;
const UNSUBSCRIBE = `mutation RYW_Unsubscribe($cardId: String!) {
  unsubscribeCardUpdates(cardId: $cardId) {
    __typename ... on MutationUnsubscribeCardUpdatesSuccess { data { updateSubscription { state } } }
  }
}`;
const READ_CARD = `query RYW_Read($cardId: String!) {
  card(cardId: $cardId) { __typename ... on QueryCardSuccess { data { updateSubscription { subscriptionId state } } } }
}`;

/** The data of `field` in a GraphQL answer, or an error naming the answer. */
async function dataOf(
  baseUrl: string,
  token: string,
  field: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const answer = await postGraphql(baseUrl, { query, variables }, token);
  const result = (answer.body.data as Record<string, { data?: Record<string, unknown> }> | undefined)?.[
    field
  ];
  if (!result?.data) throw new Error(`${field} failed (${answer.status}): ${JSON.stringify(answer.body)}`);
  return result.data;
}

describe('two gateways on one Redis: a card changed through one is read back through the other at once', () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let replicas: [Stack, Stack];
  let token: string;

  const cardReads = (cardId: string) =>
    sandbox.requests().filter((r) => r.method === 'GET' && r.path === `/card-interface/cards/${cardId}`)
      .length;
  const subscriptionOf = async (replica: Stack, cardId: string) =>
    (await dataOf(replica.url, token, 'card', READ_CARD, { cardId })).updateSubscription;

  beforeAll(async () => {
    redis = await startRedisServer();
    sandbox = createSandbox({
      port: 0,
      logger: createLogger({ name: 'sandbox', level: 'silent' }),
      webhookDelayMs: 100,
    });
    const { url } = await sandbox.start();
    const env = {
      ...remoteUpstreamEnv(url),
      EVENTS_BACKEND: 'redis',
      REDIS_URL: redis.url,
      CARD_CACHE_TTL_MS: '300000',
    };
    replicas = [await startStack(env), await startStack(env)];
    token = await testToken({ vaults: ['tntsandbox1'] });
  });

  afterAll(async () => {
    for (const replica of replicas ?? []) await replica?.stop();
    await sandbox?.stop();
    await redis?.stop();
  });

  it('subscribe through A, read through B; unsubscribe through B, read through A', async () => {
    const [a, b] = replicas;
    const { cardId } = (await dataOf(a.url, token, 'createCard', CREATE_CARD, {
      input: { pan: '4111111111111111', expMonth: 11, expYear: 29 },
    })) as { cardId: string };

    // Both replicas hold the card's read: further reads cost no upstream call.
    expect(await subscriptionOf(a, cardId)).toBeNull();
    expect(await subscriptionOf(b, cardId)).toBeNull();
    const cached = cardReads(cardId);
    expect(await subscriptionOf(b, cardId)).toBeNull();
    expect(await subscriptionOf(a, cardId)).toBeNull();
    expect(cardReads(cardId)).toBe(cached);

    const subscribed = (await dataOf(a.url, token, 'subscribeCardUpdates', SUBSCRIBE, { cardId })) as {
      subscriptionId: string;
      state: string;
    };
    const expected = { subscriptionId: subscribed.subscriptionId, state: subscribed.state };
    await expect.poll(() => subscriptionOf(b, cardId), { timeout: 1_000, interval: 20 }).toEqual(expected);
    expect(await subscriptionOf(a, cardId)).toEqual(expected);

    await dataOf(b.url, token, 'unsubscribeCardUpdates', UNSUBSCRIBE, { cardId });
    await expect.poll(() => subscriptionOf(a, cardId), { timeout: 1_000, interval: 20 }).toBeNull();
    expect(await subscriptionOf(b, cardId)).toBeNull();
  });
});
