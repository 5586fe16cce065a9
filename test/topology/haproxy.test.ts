import { type Client, createClient } from 'graphql-ws';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  CARD_EVENTS_SUBSCRIPTION,
  duplicatesOf,
  LOG_START_CURSOR,
  notification,
  postNotification,
  type StreamedCardEvent,
  testToken,
} from '../support/fixtures.ts';
import { HAPROXY_SOURCE_ADDRESS, type HaproxyProcess, startHaproxy } from '../support/haproxy.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/processes.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';
import { sampleValue, scrapeMetrics } from '../support/telemetry.ts';

/**
 * The docker-compose.yml topology with real processes: two `node src/main.ts` replicas on one real
 * redis-server (append-only file), a real HAProxy with deploy/haproxy.cfg in front.
 */
describe('two gateways on Redis behind HAProxy', () => {
  let redis: RedisServer;
  let gateways: GatewayProcess[] = [];
  let lb: HaproxyProcess;
  let client: Client | undefined;

  const hostOf = (url: string) => new URL(url).host;
  /** A replica's metrics address, from its "listening" log line. */
  const metricsUrlOf = (gateway: GatewayProcess) =>
    /"metrics":"(http:\/\/127\.0\.0\.1:\d+)\/metrics"/.exec(gateway.output())![1]!;
  const liveWsSubscriptions = async (gateway: GatewayProcess) =>
    sampleValue(
      (await scrapeMetrics(metricsUrlOf(gateway))).samples,
      'cardgraph_graphql_live_subscriptions',
      {
        transport: 'graphql-ws',
      },
    );
  const readinessThroughBalancer = async () => {
    const response = await request(`${lb.url}/readiness`);
    await response.body.dump();
    return response.statusCode;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    // HAProxy connects from its own address with a PROXY protocol header (deploy/haproxy.cfg).
    const env = { EVENTS_BACKEND: 'redis', REDIS_URL: redis.url, TRUSTED_PROXIES: HAPROXY_SOURCE_ADDRESS };
    gateways = await Promise.all([startGatewayProcess({ env }), startGatewayProcess({ env })]);
    lb = await startHaproxy([hostOf(gateways[0]!.url), hostOf(gateways[1]!.url)]);
  });

  afterAll(async () => {
    await client?.dispose();
    await lb?.stop();
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await redis?.stop();
  });

  it('delivers events posted to either replica to a subscriber on the balancer, and keeps it served when its replica is SIGKILLed', async () => {
    await expect.poll(readinessThroughBalancer, { timeout: 10_000 }).toBe(200);
    const token = await testToken({ vaults: ['tntsandbox1'] });
    const received: StreamedCardEvent[] = [];
    const errors: unknown[] = [];
    let connections = 0;
    // graphql-ws resends this payload on every reconnect: `after` always holds the last cursor seen,
    // so the new replica resumes exactly after it.
    const payload = { query: CARD_EVENTS_SUBSCRIPTION, variables: { after: LOG_START_CURSOR } };
    client = createClient({
      url: `${lb.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 50,
      retryWait: () => new Promise((resolve) => setTimeout(resolve, 200)),
      shouldRetry: () => true,
      on: { connected: () => connections++ },
    });
    client.subscribe<{ cardEvents: StreamedCardEvent }>(payload, {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        const event = result.data?.cardEvents;
        if (!event) return;
        received.push(event);
        payload.variables.after = event.cursor;
      },
      error: (error) => errors.push(error),
      complete: () => {},
    });
    const ids = () => received.map((event) => event.id);

    // Which replica holds the socket: the one whose metrics count it.
    await expect
      .poll(async () => (await Promise.all(gateways.map(liveWsSubscriptions))).reduce((a, b) => a + b), {
        timeout: 10_000,
      })
      .toBe(1);
    const holder = (await liveWsSubscriptions(gateways[0]!)) === 1 ? gateways[0]! : gateways[1]!;
    const survivor = holder === gateways[0] ? gateways[1]! : gateways[0]!;

    // Posted straight to each replica: the subscriber sees both, whichever replica it is on.
    const first = notification({ tenant: 'tntsandbox1' });
    const second = notification({ tenant: 'tntsandbox1' });
    expect((await postNotification(holder.url, first)).status).toBe(200);
    expect((await postNotification(survivor.url, second)).status).toBe(200);
    await expect.poll(ids, { timeout: 10_000 }).toEqual([first.id, second.id]);

    // The subscriber's replica dies without a goodbye. An event arrives while the client reconnects,
    // another through the balancer once it has.
    await holder.kill('SIGKILL');
    const whileAway = notification({ tenant: 'tntsandbox1' });
    expect((await postNotification(survivor.url, whileAway)).status).toBe(200);
    await expect.poll(() => connections, { timeout: 15_000 }).toBe(2);
    await expect.poll(() => liveWsSubscriptions(survivor), { timeout: 10_000 }).toBe(1);
    const afterwards = notification({ tenant: 'tntsandbox1' });
    await expect
      .poll(async () => (await postNotification(lb.url, afterwards).catch(() => ({ status: 0 }))).status, {
        timeout: 10_000,
      })
      .toBe(200);
    await expect.poll(ids, { timeout: 10_000 }).toEqual([first.id, second.id, whileAway.id, afterwards.id]);
    expect(duplicatesOf(ids())).toEqual([]);
    expect(errors).toEqual([]);
    // The balancer marked the dead replica down and stays ready through the survivor.
    await expect.poll(readinessThroughBalancer, { timeout: 10_000 }).toBe(200);
    await expect.poll(() => /gateway[12] is DOWN/.test(lb.output()), { timeout: 10_000 }).toBe(true);
  }, 90_000);
});
