import { describe, expect, it } from 'vitest';
import { UpstreamServiceError } from '../../src/errors.ts';
import { BinAttributesCache } from '../../src/loaders/bin-attributes-cache.ts';
import { type CardAttributes, UpstreamError } from '../../src/upstream/index.ts';

/**
 * The app-wide BIN cache (issue 10, class 6): concurrent misses share one lookup, but a lookup that
 * fails or hangs is never memoized: waiters give up at `maxWaitMs` with a retryable
 * `upstream-timeout`, and the next request for the BIN asks the upstream again.
 */

const ATTRIBUTES = { bin: '510026', brand: 'MASTERCARD' } as unknown as CardAttributes;

describe('BinAttributesCache', () => {
  it('bounds the wait on a hanging lookup and evicts it, so a later request looks up again', async () => {
    const cache = new BinAttributesCache({ ttlMs: 60_000, maxEntries: 10, maxWaitMs: 100 });
    let lookups = 0;
    const hanging = () => {
      lookups++;
      return new Promise<CardAttributes | null>(() => undefined);
    };
    const started = Date.now();
    const waiters = await Promise.allSettled([cache.get('510026', hanging), cache.get('510026', hanging)]);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(lookups).toBe(1);
    for (const waiter of waiters) {
      expect(waiter.status).toBe('rejected');
      const reason = (waiter as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(UpstreamServiceError);
      expect(reason).toMatchObject({ code: 'upstream-timeout', retryable: true, status: null });
    }
    expect(cache.size).toBe(0);

    const counted = async (value: CardAttributes | null) => {
      lookups++;
      return value;
    };
    await expect(cache.get('510026', () => counted(ATTRIBUTES))).resolves.toBe(ATTRIBUTES);
    expect(lookups).toBe(2);
    // Now cached: no further lookup.
    await expect(cache.get('510026', () => counted(null))).resolves.toBe(ATTRIBUTES);
    expect(lookups).toBe(2);
  });

  it('does not memoize a failed lookup', async () => {
    const cache = new BinAttributesCache({ ttlMs: 60_000, maxEntries: 10, maxWaitMs: 1_000 });
    const failure = new UpstreamError({ area: 'card-attributes', code: 'connection-failed' });
    await expect(cache.get('411111', () => Promise.reject(failure))).rejects.toBe(failure);
    expect(cache.size).toBe(0);
    await expect(cache.get('411111', async () => null)).resolves.toBeNull();
    expect(cache.size).toBe(1);
  });
});
