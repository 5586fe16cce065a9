import type { LRUCache } from 'lru-cache';
import { UpstreamServiceError } from '../errors.ts';
import { entryBoundedCache } from '../lib/lru.ts';
import type { CardAttributes } from '../upstream/index.ts';

/**
 * Options of {@link BinAttributesCache}; `ttlMs` in ms, `maxEntries` a count of BINs, `maxWaitMs` the
 * longest any caller waits for a lookup in flight (ms; the upstream deadline), after which the caller
 * gets a retryable `upstream-timeout` and the pending lookup is forgotten.
 */
export interface BinAttributesCacheOptions {
  ttlMs: number;
  maxEntries: number;
  maxWaitMs?: number;
  now?: () => number;
}

/**
 * App-wide cache of card attributes per 6-digit BIN (spec "Card attributes": static per data set
 * `version`). Bounded (least recently used entries go first) and time-limited; concurrent misses
 * for one BIN share one upstream lookup. `null` (the data set knows no attributes for the BIN) is
 * kept like any answer, being as static; failures are not: a lookup that fails, or outlives
 * `maxWaitMs`, is evicted at once, so the next request for that BIN asks the upstream again instead
 * of waiting on (or inheriting) a memoized failure. Keys are BINs only: a PAN never becomes a cache
 * key.
 */
interface Entry {
  value: Promise<CardAttributes | null>;
  expiresAt: number;
  /** True until the lookup settles; only then do callers need a bounded wait. */
  pending: boolean;
}

export class BinAttributesCache {
  // Least recently used dropped beyond `maxEntries` (lru-cache: a Map dropping its first key walks the
  // deleted entries V8 keeps at its front).
  readonly #entries: LRUCache<string, Entry>;
  readonly #options: BinAttributesCacheOptions;

  /** @throws RangeError when `maxEntries` is not a positive integer. */
  constructor(options: BinAttributesCacheOptions) {
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 1)
      throw new RangeError('maxEntries must be ≥ 1');
    this.#options = options;
    this.#entries = entryBoundedCache(options.maxEntries);
  }

  /**
   * The attributes of `bin`, from the cache or from `lookup` (whose answer, `null` included, is
   * cached; its failure is not).
   * @param bin exactly 6 digits.
   * @param lookup resolves the attributes, or `null` when the data set knows none for the BIN.
   * @throws whatever `lookup` throws; UpstreamServiceError `upstream-timeout` (retryable, no
   *   status) when the lookup is still pending after `maxWaitMs`.
   */
  get(bin: string, lookup: () => Promise<CardAttributes | null>): Promise<CardAttributes | null> {
    if (!/^\d{6}$/.test(bin)) return Promise.reject(new RangeError('a BIN cache key is 6 digits'));
    const now = (this.#options.now ?? Date.now)();
    const hit = this.#entries.get(bin);
    if (hit && hit.expiresAt > now) {
      return hit.pending ? this.#bounded(bin, hit.value) : hit.value;
    }
    const value = lookup();
    const entry: Entry = { value, expiresAt: now + this.#options.ttlMs, pending: true };
    this.#entries.set(bin, entry);
    value.then(
      () => {
        entry.pending = false;
      },
      () => this.#evict(bin, value),
    );
    return this.#bounded(bin, value);
  }

  /** Forgets `value` as the entry of `bin` unless a newer lookup replaced it. */
  #evict(bin: string, value: Promise<CardAttributes | null>): void {
    if (this.#entries.peek(bin)?.value === value) this.#entries.delete(bin);
  }

  /** `value`, or a timeout after `maxWaitMs` that also evicts the still-pending lookup. */
  #bounded(bin: string, value: Promise<CardAttributes | null>): Promise<CardAttributes | null> {
    const maxWaitMs = this.#options.maxWaitMs;
    if (maxWaitMs === undefined) return value;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.#evict(bin, value);
        reject(
          new UpstreamServiceError(
            'card-attributes answered nothing (upstream-timeout)',
            'upstream-timeout',
            true,
            null,
          ),
        );
      }, maxWaitMs);
    });
    return Promise.race([value, timeout]).finally(() => clearTimeout(timer));
  }

  /** Number of cached BINs. */
  get size(): number {
    return this.#entries.size;
  }
}
