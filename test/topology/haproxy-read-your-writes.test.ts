import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { createSandbox, type Sandbox } from '../../src/sandbox/sandbox.ts';
import { postGraphql, remoteUpstreamEnv, testToken } from '../support/fixtures.ts';
import { HAPROXY_SOURCE_ADDRESS, type HaproxyProcess, startHaproxy } from '../support/haproxy.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/processes.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

/**
 * Issue 20 item 2 in the docker-compose.yml topology with real processes: two `node src/main.ts`
 * replicas on one redis-server and one upstream (the sandbox, as the provider), HAProxy with
 * deploy/haproxy.cfg in front, the card read cache on with its default 5 min TTL. A card changed
 * through the balancer is read back through each replica at once, whichever replica took the write.
 */

const CREATE_CARD = `mutation TOPO_Create($input: CreateCardInput!) {
  createCard(input: $input) { __typename ... on MutationCreateCardSuccess { data { cardId } } }
}`;
const SUBSCRIBE = `mutation TOPO_Subscribe($cardId: String!) {
  subscribeCardUpdates(cardId: $cardId) {
    __typename ... on MutationSubscribeCardUpdatesSuccess { data { subscriptionId state } }
  }
}`;
const UNSUBSCRIBE = `mutation TOPO_Unsubscribe($cardId: String!) {
  unsubscribeCardUpdates(cardId: $cardId) {
    __typename ... on MutationUnsubscribeCardUpdatesSuccess { data { cardId } }
  }
}`;
const READ_CARD = `query TOPO_Read($cardId: String!) {
  card(cardId: $cardId) { __typename ... on QueryCardSuccess { data { updateSubscription { subscriptionId state } } } }
}`;

describe('two replicas behind HAProxy read back each other’s card changes at once', () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let gateways: GatewayProcess[] = [];
  let lb: HaproxyProcess;
  let token: string;

  const dataOf = async (
    baseUrl: string,
    field: string,
    query: string,
    variables: Record<string, unknown>,
  ) => {
    const answer = await postGraphql(baseUrl, { query, variables }, token);
    const result = (answer.body.data as Record<string, { data?: Record<string, unknown> }> | undefined)?.[
      field
    ];
    if (!result?.data) throw new Error(`${field} failed (${answer.status}): ${JSON.stringify(answer.body)}`);
    return result.data;
  };
  const subscriptionsThroughEachReplica = (cardId: string) =>
    Promise.all(
      gateways.map(
        async (gateway) => (await dataOf(gateway.url, 'card', READ_CARD, { cardId })).updateSubscription,
      ),
    );
  const cardReads = (cardId: string) =>
    sandbox.requests().filter((r) => r.method === 'GET' && r.path === `/card-interface/cards/${cardId}`)
      .length;

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
      // HAProxy connects from its own address with a PROXY protocol header (deploy/haproxy.cfg).
      TRUSTED_PROXIES: HAPROXY_SOURCE_ADDRESS,
    };
    gateways = await Promise.all([startGatewayProcess({ env }), startGatewayProcess({ env })]);
    lb = await startHaproxy([new URL(gateways[0]!.url).host, new URL(gateways[1]!.url).host]);
    token = await testToken({ vaults: ['tntsandbox1'] });
  });

  afterAll(async () => {
    await lb?.stop();
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await sandbox?.stop();
    await redis?.stop();
  });

  it('subscribe and unsubscribe through the balancer; both replicas answer the new state at once', async () => {
    // HAProxy sends traffic once its checks found a replica ready.
    const readinessThroughBalancer = async () => {
      const response = await request(`${lb.url}/readiness`);
      await response.body.dump();
      return response.statusCode;
    };
    await expect.poll(readinessThroughBalancer, { timeout: 10_000 }).toBe(200);
    const { cardId } = (await dataOf(lb.url, 'createCard', CREATE_CARD, {
      input: { pan: '4111111111111111', expMonth: 11, expYear: 29 },
    })) as { cardId: string };
    // Both replicas hold the card's read (a second round costs no upstream call).
    expect(await subscriptionsThroughEachReplica(cardId)).toEqual([null, null]);
    const cached = cardReads(cardId);
    expect(await subscriptionsThroughEachReplica(cardId)).toEqual([null, null]);
    expect(cardReads(cardId)).toBe(cached);

    const subscribed = await dataOf(lb.url, 'subscribeCardUpdates', SUBSCRIBE, { cardId });
    const expected = { subscriptionId: subscribed.subscriptionId, state: subscribed.state };
    await expect
      .poll(() => subscriptionsThroughEachReplica(cardId), { timeout: 1_000, interval: 20 })
      .toEqual([expected, expected]);

    await dataOf(lb.url, 'unsubscribeCardUpdates', UNSUBSCRIBE, { cardId });
    await expect
      .poll(() => subscriptionsThroughEachReplica(cardId), { timeout: 1_000, interval: 20 })
      .toEqual([null, null]);
  }, 60_000);
});
