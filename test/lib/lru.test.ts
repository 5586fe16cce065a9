import { describe, expect, it } from 'vitest';
import { entryBoundedCache } from '../../src/lib/lru.ts';

describe('entryBoundedCache', () => {
  it('holds at most maxEntries, dropping the least recently used', () => {
    const cache = entryBoundedCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recent
    cache.set('c', 3);
    expect([...cache.keys()].sort()).toEqual(['a', 'c']);
    expect(cache.size).toBe(2);
    cache.set('c', 4); // a replaced entry takes no second slot
    cache.set('d', 5);
    expect([...cache.entries()].sort()).toEqual([
      ['c', 4],
      ['d', 5],
    ]);
  });

  it('takes 100,000 entries and then drops the oldest, one for one', () => {
    const cache = entryBoundedCache<number, number>(100_000);
    for (let i = 0; i < 100_001; i++) cache.set(i, i);
    expect(cache.size).toBe(100_000);
    expect(cache.has(0)).toBe(false);
    expect(cache.get(100_000)).toBe(100_000);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => entryBoundedCache(0)).toThrow(TypeError);
    expect(() => entryBoundedCache(1.5)).toThrow(TypeError);
  });
});
