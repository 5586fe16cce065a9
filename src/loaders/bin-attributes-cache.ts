import type { CardAttributes } from '../upstream/index.ts';

/** Options of {@link BinAttributesCache}; `ttlMs` in ms, `maxEntries` a count of BINs. */
export interface BinAttributesCacheOptions {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}

/**
 * App-wide cache of card attributes per 6-digit BIN (spec "Card attributes": static per data set
 * `version`). Bounded (least recently used entries go first) and time-limited; concurrent misses
 * for one BIN share one upstream lookup. `null` (the data set knows no attributes for the BIN) is
 * kept like any answer, being as static; only failures are not. Keys are BINs only: a PAN never
 * becomes a cache key.
 */
export class BinAttributesCache {
  readonly #entries = new Map<string, { value: Promise<CardAttributes | null>; expiresAt: number }>();
  readonly #options: BinAttributesCacheOptions;

  constructor(options: BinAttributesCacheOptions) {
    this.#options = options;
  }

  /**
   * The attributes of `bin`, from the cache or from `lookup` (whose answer, `null` included, is
   * cached; its failure is not).
   * @param bin exactly 6 digits.
   * @param lookup resolves the attributes, or `null` when the data set knows none for the BIN.
   * @throws whatever `lookup` throws.
   */
  get(bin: string, lookup: () => Promise<CardAttributes | null>): Promise<CardAttributes | null> {
    if (!/^\d{6}$/.test(bin)) return Promise.reject(new RangeError('a BIN cache key is 6 digits'));
    const now = (this.#options.now ?? Date.now)();
    const hit = this.#entries.get(bin);
    if (hit && hit.expiresAt > now) {
      this.#entries.delete(bin);
      this.#entries.set(bin, hit);
      return hit.value;
    }
    const value = lookup();
    this.#entries.set(bin, { value, expiresAt: now + this.#options.ttlMs });
    value.catch(() => {
      if (this.#entries.get(bin)?.value === value) this.#entries.delete(bin);
    });
    while (this.#entries.size > this.#options.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    return value;
  }

  /** Number of cached BINs. */
  get size(): number {
    return this.#entries.size;
  }
}
