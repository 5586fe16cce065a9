import type { LRUCache } from 'lru-cache';
import { entryBoundedCache } from '../lib/lru.ts';
/** The upstream card reads {@link CardReadCache} holds: card interface and account updater v1 cards. */
export type CardReadArea = 'card-interface' | 'account-updater';

/** What a {@link CardReadCache} lookup did. */
export type CardReadOutcome = 'hit' | 'miss';

/** Options of {@link CardReadCache}. Durations in ms. */
export interface CardReadCacheOptions {
  /** Longest time a read is served without a card event (backstop for a missed event); 0 disables the cache. */
  ttlMs: number;
  /** Cards held (least recently used dropped beyond it). */
  maxEntries: number;
  /** Clock in ms since the epoch (tests). */
  now?: () => number;
  /** Called on every lookup (metrics). */
  onLookup?: (area: CardReadArea, outcome: CardReadOutcome) => void;
  /**
   * Tells the other replicas a card changed (src/loaders/card-invalidations.ts, issue 20 item 2),
   * called by {@link CardReadCache.changed}; none with one gateway.
   */
  publish?: (change: { vaultId: string; cardId: string }) => Promise<void>;
}

/** Card ids the cache accepts (`CRD…`); anything else (never a PAN, but be sure) is read uncached. */
export const CARD_ID = /^CRD[A-Za-z0-9]{1,64}$/;

interface Entry {
  value: Promise<unknown>;
  expiresAt: number;
}

/**
 * App-wide, per-vault cache of upstream card reads (issue 13 "Reads cached until the card
 * changes"): a card read once is served from memory until an `au_card.*` event of that card arrives
 * (on this replica or, through the Redis log's tail, any other), a mutation of it succeeds on any
 * replica ({@link CardReadCache.changed}, published to the others), or `ttlMs` passes. Keys are area, vault id and card id (`CRD…`), never card numbers. A failed read is
 * not kept. Counters `hits`, `misses` and `invalidations` are for metrics.
 */
export class CardReadCache {
  // Least recently used dropped beyond `maxEntries` (lru-cache: a Map dropping its first key walks the
  // deleted entries V8 keeps at its front).
  readonly #entries: LRUCache<string, Entry>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #onLookup: CardReadCacheOptions['onLookup'];
  readonly #publish: CardReadCacheOptions['publish'];
  #hits = 0;
  #misses = 0;
  #invalidations = 0;

  /** @throws RangeError when `ttlMs` is negative or `maxEntries` is not a positive integer. */
  constructor(options: CardReadCacheOptions) {
    if (!(options.ttlMs >= 0)) throw new RangeError('ttlMs must be ≥ 0');
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 1)
      throw new RangeError('maxEntries must be ≥ 1');
    this.#ttlMs = options.ttlMs;
    this.#entries = entryBoundedCache(options.maxEntries);
    this.#now = options.now ?? Date.now;
    this.#onLookup = options.onLookup;
    this.#publish = options.publish;
  }

  /** Lookups answered from memory. */
  get hits(): number {
    return this.#hits;
  }

  /** Lookups that read upstream. */
  get misses(): number {
    return this.#misses;
  }

  /** Cards dropped by {@link invalidate}. */
  get invalidations(): number {
    return this.#invalidations;
  }

  /** Cards currently held. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The card `cardId` of `vaultId` in `area`: from memory when held and fresh, else `read()` (whose
   * promise concurrent lookups share).
   * @throws whatever `read` throws (and the failure is not kept).
   */
  get<V>(area: CardReadArea, vaultId: string, cardId: string, read: () => Promise<V>): Promise<V> {
    if (this.#ttlMs === 0 || !CARD_ID.test(cardId)) return read();
    const key = `${area}\u0000${vaultId}\u0000${cardId}`;
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > this.#now()) {
      this.#hits++;
      this.#onLookup?.(area, 'hit');
      return entry.value as Promise<V>;
    }
    this.#misses++;
    this.#onLookup?.(area, 'miss');
    const value = read();
    const fresh: Entry = { value, expiresAt: this.#now() + this.#ttlMs };
    this.#entries.set(key, fresh);
    value.catch(() => {
      if (this.#entries.peek(key) === fresh) this.#entries.delete(key);
    });
    return value;
  }

  /**
   * A mutation here changed the card `cardId` of `vaultId`: drops its reads on this replica, then
   * tells every other replica to drop theirs (`publish`), so a read through any replica right after
   * the mutation's answer sees the change (issue 20 item 2). Resolves once published; never rejects.
   */
  async changed(vaultId: string, cardId: string): Promise<void> {
    this.invalidate(vaultId, cardId);
    await this.#publish?.({ vaultId, cardId });
  }

  /** Drops every area's read of `cardId` in `vaultId` (a card event or a mutation changed it). */
  invalidate(vaultId: string, cardId: string): void {
    for (const area of ['card-interface', 'account-updater'] as const) {
      if (this.#entries.delete(`${area}\u0000${vaultId}\u0000${cardId}`)) this.#invalidations++;
    }
  }
}
