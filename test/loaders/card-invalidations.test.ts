import { createClient, type RedisClientType } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import {
  CARD_INVALIDATION_CHANNEL,
  type CardChange,
  type CardInvalidationChannel,
  openRedisCardInvalidations,
  PUBLISH_TIMEOUT_MS,
} from '../../src/loaders/card-invalidations.ts';
import { CardReadCache } from '../../src/loaders/card-read-cache.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

/** Card changes between replicas over Redis pub/sub (issue 20 item 2). */

const CARD = 'CRDaaaaaaaaaaaaaaaaaaaaaa';
const WAIT = { timeout: 2_000, interval: 10 } as const;

describe('card changes over Redis pub/sub', () => {
  let redis: RedisServer;
  let spy: RedisClientType;
  const seen: string[] = [];
  const channels: CardInvalidationChannel[] = [];
  const open = async () => {
    const channel = await openRedisCardInvalidations({
      url: redis.url,
      logger: createLogger({ name: 'card-invalidations-test', level: 'silent' }),
    });
    channels.push(channel);
    return channel;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    spy = createClient({ url: redis.url });
    await spy.connect();
    await spy.subscribe(CARD_INVALIDATION_CHANNEL, (message) => seen.push(message));
  });
  afterAll(async () => {
    for (const channel of channels) await channel.close();
    await spy?.close();
    await redis?.stop();
  });

  it("drops the card's cached reads on the other replicas (not on the publisher, which dropped its own)", async () => {
    const [a, b] = [await open(), await open()];
    const cacheA = new CardReadCache({ ttlMs: 300_000, maxEntries: 10, publish: a.publish });
    const cacheB = new CardReadCache({ ttlMs: 300_000, maxEntries: 10, publish: b.publish });
    const heardByA: CardChange[] = [];
    a.listen((change) => heardByA.push(change));
    b.listen((change) => cacheB.invalidate(change.vaultId, change.cardId));
    const readA = vi.fn(async () => ({ state: 'old' }));
    const readB = vi.fn(async () => ({ state: 'old' }));
    await cacheA.get('card-interface', 'tntsandbox1', CARD, readA);
    await cacheB.get('card-interface', 'tntsandbox1', CARD, readB);
    await cacheB.get('account-updater', 'tntsandbox1', CARD, readB);
    expect(cacheB.size).toBe(2);

    await cacheA.changed('tntsandbox1', CARD);
    expect(cacheA.size).toBe(0);
    await vi.waitFor(() => expect(cacheB.size).toBe(0), WAIT);
    expect(cacheB.invalidations).toBe(2);
    expect(heardByA).toEqual([]);
  });

  it('sends ids only, and neither sends nor hands on anything but a vault id and a CRD card id', async () => {
    const [a, b] = [await open(), await open()];
    const heard: CardChange[] = [];
    b.listen((change) => heard.push(change));
    seen.length = 0;
    await a.publish({ vaultId: 'tntsandbox1', cardId: '4111111111111111' });
    await a.publish({ vaultId: 'not a vault', cardId: CARD });
    await a.publish({ vaultId: 'tntsandbox2', cardId: CARD });
    await vi.waitFor(() => expect(heard).toEqual([{ vaultId: 'tntsandbox2', cardId: CARD }]), WAIT);
    await vi.waitFor(
      () =>
        expect(seen.map((message) => Object.keys(JSON.parse(message) as object).sort())).toEqual([
          ['cardId', 'origin', 'vaultId'],
        ]),
      WAIT,
    );

    // Messages from elsewhere on the channel: malformed ones and a PAN in place of a card id are dropped.
    for (const message of [
      'not json',
      'null',
      JSON.stringify({ origin: 'x', vaultId: 'tntsandbox1', cardId: '4111111111111111' }),
      JSON.stringify({ origin: 'x', vaultId: 'tntsandbox1', cardId: CARD }),
    ]) {
      await spy
        .duplicate()
        .connect()
        .then(async (client) => {
          await client.publish(CARD_INVALIDATION_CHANNEL, message);
          await client.close();
        });
    }
    await vi.waitFor(
      () =>
        expect(heard).toEqual([
          { vaultId: 'tntsandbox2', cardId: CARD },
          { vaultId: 'tntsandbox1', cardId: CARD },
        ]),
      WAIT,
    );
  });
});

describe('card changes when the caches’ Redis is gone', () => {
  it('a mutation’s publish gives up at once (logged), and the card is still dropped here', async () => {
    const redis = await startRedisServer();
    const channel = await openRedisCardInvalidations({
      url: redis.url,
      logger: createLogger({ name: 'card-invalidations-test', level: 'silent' }),
    });
    try {
      const cache = new CardReadCache({ ttlMs: 300_000, maxEntries: 10, publish: channel.publish });
      await cache.get('card-interface', 'tntsandbox1', CARD, async () => ({ state: 'old' }));
      await redis.stop();
      const started = performance.now();
      await cache.changed('tntsandbox1', CARD);
      expect(performance.now() - started).toBeLessThan(PUBLISH_TIMEOUT_MS + 500);
      expect(cache.size).toBe(0);
    } finally {
      await channel.close();
    }
  });
});
