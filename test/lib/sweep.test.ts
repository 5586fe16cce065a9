import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSweep } from '../../src/lib/sweep.ts';

/** The keep-alive sweep (issue 21): every item once per period, a slice at a time. */
describe('startSweep', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('visits each of 100 items once per period, at most ceil(100 / slices) per slice', () => {
    vi.useFakeTimers();
    const items = new Set(Array.from({ length: 100 }, (_, i) => i));
    const visits: number[][] = [];
    let slice: number[] = [];
    const stop = startSweep(items, 1_000, (item) => slice.push(item), 10);
    for (let tick = 0; tick < 11; tick++) {
      vi.advanceTimersByTime(100);
      visits.push(slice);
      slice = [];
    }
    // Ten slices of ten cover the set; the eleventh tick ends the round.
    expect(visits.slice(0, 10).map((s) => s.length)).toEqual(Array(10).fill(10));
    expect(visits.slice(0, 10).flat()).toEqual([...items]);
    expect(visits[10]).toEqual([]);
    // The next round starts again from the first item.
    vi.advanceTimersByTime(100);
    expect(slice).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    stop();
    slice = [];
    vi.advanceTimersByTime(5_000);
    expect(slice).toEqual([]);
  });

  it('skips items removed during a round and visits items added before the iteration reaches them', () => {
    vi.useFakeTimers();
    const items = new Set(['a', 'b', 'c', 'd']);
    const seen: string[] = [];
    const stop = startSweep(items, 400, (item) => seen.push(item), 4);
    vi.advanceTimersByTime(100);
    expect(seen).toEqual(['a']);
    items.delete('c');
    items.add('e');
    vi.advanceTimersByTime(300);
    expect(seen).toEqual(['a', 'b', 'd', 'e']);
    stop();
  });
});
