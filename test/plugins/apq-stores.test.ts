import type { APQStore } from '@graphql-yoga/plugin-apq';
import { createClient, type RedisClientType } from 'redis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import {
  createMemoryApqStore,
  createRedisApqStore,
  REDIS_APQ_KEYS,
  REDIS_APQ_TIMEOUT_MS,
} from '../../src/plugins/persisted-operations.ts';
import { type RedisServer, startRedisServer } from '../support/redis-server.ts';

/**
 * The APQ stores' bounds (issue 20 item 1): a count AND a byte cap, in Redis as in memory, the
 * oldest entries dropped first, each entry expiring `ttlS` after its registration.
 */

const KIB = 1024;
/** A distinct document of exactly `bytes` bytes. */
const documentOf = (name: string, bytes: number) => {
  const head = `{ viewer { subject } } # ${name} `;
  return head + 'x'.repeat(bytes - head.length);
};

describe('in-memory APQ store', () => {
  it('keeps at most maxEntries documents, least recently used dropped first', async () => {
    const store = createMemoryApqStore({ maxEntries: 2, maxBytes: 1024 * KIB, ttlS: 60 });
    await store.set('a', documentOf('a', 100));
    await store.set('b', documentOf('b', 100));
    await store.set('c', documentOf('c', 100));
    expect([await store.get('a'), await store.get('b'), await store.get('c')]).toEqual([
      undefined,
      documentOf('b', 100),
      documentOf('c', 100),
    ]);
  });

  it('keeps at most maxBytes of document text: a 60 KiB registration drops the oldest to fit', async () => {
    const store = createMemoryApqStore({ maxEntries: 1000, maxBytes: 128 * KIB, ttlS: 60 });
    await store.set('a', documentOf('a', 60 * KIB));
    await store.set('b', documentOf('b', 60 * KIB));
    await store.set('c', documentOf('c', 60 * KIB));
    expect(await store.get('a')).toBeUndefined();
    expect(await store.get('b')).toBe(documentOf('b', 60 * KIB));
    expect(await store.get('c')).toBe(documentOf('c', 60 * KIB));
  });
});

describe('Redis APQ store', () => {
  let redis: RedisServer;
  let client: RedisClientType;
  let nowMs = 1_000_000;
  const stores: { close(): Promise<void> }[] = [];
  const open = async (limits: { maxEntries: number; maxBytes: number; ttlS: number }) => {
    const store = await createRedisApqStore({
      ...limits,
      url: redis.url,
      logger: createLogger({ name: 'apq-stores-test', level: 'silent' }),
      now: () => nowMs,
    });
    stores.push(store);
    return store;
  };
  const held = async () => ({
    hashes: await client.zRange(REDIS_APQ_KEYS.registered, 0, -1),
    bytes: Number(await client.get(REDIS_APQ_KEYS.bytes)),
    documents: await client.hLen(REDIS_APQ_KEYS.documents),
  });

  beforeAll(async () => {
    redis = await startRedisServer();
    client = createClient({ url: redis.url });
    await client.connect();
  });
  beforeEach(async () => {
    await client.flushAll();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await client?.close();
    await redis?.stop();
  });

  it('keeps at most maxEntries documents, the oldest registration dropped first', async () => {
    const store: APQStore = await open({ maxEntries: 3, maxBytes: 1024 * KIB, ttlS: 600 });
    for (const name of ['a', 'b', 'c', 'd']) {
      await store.set(name, documentOf(name, 1 * KIB));
      nowMs += 1;
    }
    expect(await held()).toEqual({ hashes: ['b', 'c', 'd'], bytes: 3 * KIB, documents: 3 });
    expect(await store.get('a')).toBeNull();
    expect(await store.get('d')).toBe(documentOf('d', 1 * KIB));
  });

  it('keeps at most maxBytes of document text: 60 KiB documents beyond it drop the oldest', async () => {
    const store = await open({ maxEntries: 1000, maxBytes: 256 * KIB, ttlS: 600 });
    for (let i = 0; i < 10; i++) {
      await store.set(`h${i}`, documentOf(`h${i}`, 60 * KIB));
      nowMs += 1;
    }
    expect(await held()).toEqual({ hashes: ['h6', 'h7', 'h8', 'h9'], bytes: 240 * KIB, documents: 4 });
    // A document larger than the whole budget is not stored, and drops nothing.
    await store.set('huge', documentOf('huge', 300 * KIB));
    expect(await held()).toEqual({ hashes: ['h6', 'h7', 'h8', 'h9'], bytes: 240 * KIB, documents: 4 });
  });

  it('registering a hash again refreshes it without counting its bytes twice; entries expire after ttlS', async () => {
    const store = await open({ maxEntries: 10, maxBytes: 1024 * KIB, ttlS: 60 });
    await store.set('a', documentOf('a', 2 * KIB));
    nowMs += 30_000;
    await store.set('b', documentOf('b', 1 * KIB));
    nowMs += 1;
    await store.set('a', documentOf('a', 2 * KIB));
    expect(await held()).toEqual({ hashes: ['b', 'a'], bytes: 3 * KIB, documents: 2 });
    nowMs += 59_999;
    expect(await store.get('a')).toBe(documentOf('a', 2 * KIB));
    // b was registered 60.000 s ago: expired, though still held until the next registration trims it.
    expect(await store.get('b')).toBeNull();
    nowMs += 1;
    expect(await store.get('a')).toBeNull();
    await store.set('c', documentOf('c', 1 * KIB));
    expect(await held()).toEqual({ hashes: ['c'], bytes: 1 * KIB, documents: 1 });
  });

  it('two replicas share one budget: registrations through either are trimmed together', async () => {
    const limits = { maxEntries: 2, maxBytes: 1024 * KIB, ttlS: 600 };
    const [a, b] = [await open(limits), await open(limits)];
    await a.set('one', documentOf('one', KIB));
    nowMs += 1;
    await b.set('two', documentOf('two', KIB));
    nowMs += 1;
    await a.set('three', documentOf('three', KIB));
    expect(await held()).toEqual({ hashes: ['two', 'three'], bytes: 2 * KIB, documents: 2 });
    expect(await b.get('three')).toBe(documentOf('three', KIB));
  });
});

describe('Redis APQ store when Redis is gone', () => {
  it('a lookup misses and a registration gives up at once (logged), never waiting for a reconnect', async () => {
    const redis = await startRedisServer();
    const store = await createRedisApqStore({
      url: redis.url,
      maxEntries: 10,
      maxBytes: 1024 * KIB,
      ttlS: 60,
      logger: createLogger({ name: 'apq-stores-test', level: 'silent' }),
    });
    try {
      await store.set('a', documentOf('a', KIB));
      expect(await store.get('a')).toBe(documentOf('a', KIB));
      await redis.stop();
      const started = performance.now();
      expect(await store.get('a')).toBeNull();
      await store.set('b', documentOf('b', KIB));
      expect(performance.now() - started).toBeLessThan(REDIS_APQ_TIMEOUT_MS);
    } finally {
      await store.close();
    }
  });
});
