/**
 * Timers the sandbox owns (enrolment completion, webhook retries, hanging fault answers), so
 * `stop()` cancels every pending one and never waits for them.
 */
export class TimerSet {
  readonly #pending = new Set<NodeJS.Timeout>();
  #closed = false;

  /**
   * Runs `fn` after `delayMs` milliseconds unless {@link TimerSet.cancelAll} ran first. Errors thrown
   * by `fn` are the caller's to catch inside `fn`. After `cancelAll`, new timers are refused silently.
   * @returns a function cancelling this timer.
   */
  schedule(delayMs: number, fn: () => void): () => void {
    if (this.#closed) return () => {};
    const timer = setTimeout(() => {
      this.#pending.delete(timer);
      fn();
    }, delayMs);
    this.#pending.add(timer);
    return () => {
      clearTimeout(timer);
      this.#pending.delete(timer);
    };
  }

  /** Number of timers not yet fired nor cancelled. */
  get size(): number {
    return this.#pending.size;
  }

  /** Cancels every pending timer and refuses new ones. */
  cancelAll(): void {
    this.#closed = true;
    for (const timer of this.#pending) clearTimeout(timer);
    this.#pending.clear();
  }
}
