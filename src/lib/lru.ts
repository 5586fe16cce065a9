import { LRUCache } from 'lru-cache';

/**
 * An lru-cache of at most `maxEntries` entries (least recently used dropped beyond it) whose storage
 * grows as it fills.
 *
 * lru-cache's `max` option preallocates its key, value and link arrays at `max` slots when the cache
 * is built: about 20 ms of start-up per 100,000 slots, and their memory, for a cache that is empty
 * at start and often stays small (a card read cache of 100,000 cards on a gateway that sees a few
 * hundred). The same bound as a size, each entry counting 1 (`maxSize` with `sizeCalculation`),
 * is allocated on demand and evicts exactly as `max` would.
 *
 * @param maxEntries positive integer, entries.
 * @throws TypeError (from lru-cache) when `maxEntries` is not a positive integer.
 */
export function entryBoundedCache<K extends {}, V extends {}>(maxEntries: number): LRUCache<K, V> {
  return new LRUCache<K, V>({ maxSize: maxEntries, sizeCalculation: entryCount });
}

/** Each entry counts 1 towards `maxSize`. */
function entryCount(): number {
  return 1;
}
