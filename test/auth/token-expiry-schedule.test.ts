import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { onTokenExpiry } from '../../src/auth/token-expiry.ts';

/** onTokenExpiry's one timer for every pending token expiry of the process (issue 21). */
describe('onTokenExpiry', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-11-27T00:00:00Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('calls each registration once at its instant, in order, with one timer for all of them', () => {
    const now = Date.now();
    const calls: string[] = [];
    onTokenExpiry(now + 3_000, () => calls.push('c'));
    onTokenExpiry(now + 1_000, () => calls.push('a1'));
    onTokenExpiry(now + 1_000, () => calls.push('a2'));
    onTokenExpiry(now + 2_000, () => calls.push('b'));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(999);
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual(['a1', 'a2']);
    vi.advanceTimersByTime(2_000);
    expect(calls).toEqual(['a1', 'a2', 'b', 'c']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('calls at once when the instant has passed; a cancelled registration is never called', () => {
    const now = Date.now();
    const passed = vi.fn();
    const cancelPassed = onTokenExpiry(now - 1, passed);
    expect(passed).toHaveBeenCalledTimes(1);
    cancelPassed();
    const cancelled = vi.fn();
    const kept = vi.fn();
    const cancel = onTokenExpiry(now + 1_000, cancelled);
    onTokenExpiry(now + 1_000, kept);
    cancel();
    cancel();
    vi.advanceTimersByTime(1_000);
    expect(cancelled).not.toHaveBeenCalled();
    expect(kept).toHaveBeenCalledTimes(1);
  });

  it('drops the timer when every registration is cancelled, and follows the next instant', () => {
    const now = Date.now();
    const first = vi.fn();
    const second = vi.fn();
    const cancelFirst = onTokenExpiry(now + 1_000, first);
    const cancelSecond = onTokenExpiry(now + 5_000, second);
    cancelFirst();
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(4_999);
    expect(second).not.toHaveBeenCalled();
    cancelSecond();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(first).not.toHaveBeenCalled();
    expect(second).not.toHaveBeenCalled();
  });

  it('waits for an instant beyond the longest timer delay (2^31 - 1 ms) in steps', () => {
    const day = 86_400_000;
    const expired = vi.fn();
    onTokenExpiry(Date.now() + 30 * day, expired);
    vi.advanceTimersByTime(25 * day);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(5 * day);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('skips a registration an earlier callback of the same instant cancelled', () => {
    const now = Date.now();
    const second = vi.fn();
    let cancelSecond = () => {};
    onTokenExpiry(now + 1_000, () => cancelSecond());
    cancelSecond = onTokenExpiry(now + 1_000, second);
    vi.advanceTimersByTime(1_000);
    expect(second).not.toHaveBeenCalled();
  });
});
