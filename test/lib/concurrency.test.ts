import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../src/lib/concurrency.ts';

describe('ConcurrencyLimit', () => {
  it('runs at most `max` tasks at once, queues the rest in order and refuses none', async () => {
    const limit = new ConcurrencyLimit(3);
    const started: number[] = [];
    let peak = 0;
    const releases: (() => void)[] = [];
    const results = Array.from({ length: 10 }, (_, index) =>
      limit.run(async () => {
        started.push(index);
        peak = Math.max(peak, limit.running);
        await new Promise<void>((resolve) => releases.push(resolve));
        return index * 2;
      }),
    );
    await expect.poll(() => started).toEqual([0, 1, 2]);
    // Each ended task hands its slot to the next waiting one.
    while (started.length < 10 || releases.length > 0) {
      const before = started.length;
      releases.shift()?.();
      if (before < 10) await expect.poll(() => started.length).toBe(before + 1);
    }
    expect(await Promise.all(results)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
    expect(limit.running).toBe(0);
  });

  it('frees the slot of a failed task and passes its error on', async () => {
    const limit = new ConcurrencyLimit(1);
    const failed = limit.run(() => Promise.reject(new Error('read failed')));
    const next = limit.run(() => Promise.resolve('next'));
    await expect(failed).rejects.toThrow('read failed');
    expect(await next).toBe('next');
    expect(limit.running).toBe(0);
  });

  it('refuses a limit below 1', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow('a concurrency limit must be at least 1, got 0');
  });
});
