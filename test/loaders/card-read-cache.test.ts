import { describe, expect, it, vi } from 'vitest';
import { BinAttributesCache } from '../../src/loaders/bin-attributes-cache.ts';
import { CardReadCache } from '../../src/loaders/card-read-cache.ts';

const CARD_A = 'CRDaaaaaaaaaaaaaaaaaaaaaa';
const CARD_B = 'CRDbbbbbbbbbbbbbbbbbbbbbb';
const CARD_C = 'CRDccccccccccccccccccccccc';

describe('CardReadCache', () => {
  it('serves a held card without reading, and drops the least recently used beyond maxEntries', async () => {
    const cache = new CardReadCache({ ttlMs: 60_000, maxEntries: 2 });
    const read = vi.fn(async () => ({ id: 'x' }));
    await cache.get('account-updater', 'tnt1', CARD_A, read);
    await cache.get('account-updater', 'tnt1', CARD_B, read);
    // A hit makes A the most recent, so C's arrival drops B.
    await cache.get('account-updater', 'tnt1', CARD_A, read);
    await cache.get('account-updater', 'tnt1', CARD_C, read);
    expect(read).toHaveBeenCalledTimes(3);
    expect([cache.hits, cache.misses, cache.size]).toEqual([1, 3, 2]);
    await cache.get('account-updater', 'tnt1', CARD_A, read);
    expect(read).toHaveBeenCalledTimes(3);
    await cache.get('account-updater', 'tnt1', CARD_B, read);
    expect(read).toHaveBeenCalledTimes(4);
  });

  it('reads again after ttlMs, after an invalidation of the card, and after a failed read', async () => {
    let nowMs = 1_000;
    const cache = new CardReadCache({ ttlMs: 500, maxEntries: 10, now: () => nowMs });
    const read = vi.fn(async () => ({ id: 'x' }));
    await cache.get('card-interface', 'tnt1', CARD_A, read);
    nowMs += 499;
    await cache.get('card-interface', 'tnt1', CARD_A, read);
    expect(read).toHaveBeenCalledTimes(1);
    nowMs += 1;
    await cache.get('card-interface', 'tnt1', CARD_A, read);
    expect(read).toHaveBeenCalledTimes(2);

    cache.invalidate('tnt1', CARD_A);
    expect(cache.invalidations).toBe(1);
    await cache.get('card-interface', 'tnt1', CARD_A, read);
    expect(read).toHaveBeenCalledTimes(3);

    const failing = vi.fn(async () => {
      throw new Error('upstream down');
    });
    await expect(cache.get('card-interface', 'tnt1', CARD_B, failing)).rejects.toThrow('upstream down');
    await expect(cache.get('card-interface', 'tnt1', CARD_B, failing)).rejects.toThrow('upstream down');
    expect(failing).toHaveBeenCalledTimes(2);
  });
});

describe('BinAttributesCache', () => {
  it('drops the least recently used BIN beyond maxEntries', async () => {
    const cache = new BinAttributesCache({ ttlMs: 60_000, maxEntries: 2, maxWaitMs: 1_000 });
    const lookup = vi.fn(async () => null);
    await cache.get('411111', lookup);
    await cache.get('522222', lookup);
    await cache.get('411111', lookup);
    await cache.get('633333', lookup);
    expect(lookup).toHaveBeenCalledTimes(3);
    await cache.get('411111', lookup);
    expect(lookup).toHaveBeenCalledTimes(3);
    await cache.get('522222', lookup);
    expect(lookup).toHaveBeenCalledTimes(4);
  });

  it('refuses a maxEntries that is not a positive integer', () => {
    expect(() => new BinAttributesCache({ ttlMs: 1, maxEntries: 0, maxWaitMs: 1 })).toThrow(RangeError);
  });
});
