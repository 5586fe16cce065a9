/**
 * A bound on how many tasks run at once: {@link ConcurrencyLimit.run} starts a task at once while
 * fewer than `max` run, else queues it (first in, first out) until one ends. Tasks are never refused.
 */
export class ConcurrencyLimit {
  readonly #max: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  /** @param max most tasks running at once, at least 1. @throws RangeError for a smaller `max`. */
  constructor(max: number) {
    if (!(max >= 1)) throw new RangeError(`a concurrency limit must be at least 1, got ${max}`);
    this.#max = max;
  }

  /** Tasks running now. */
  get running(): number {
    return this.#running;
  }

  /**
   * Runs `task` once a slot is free.
   * @returns what `task` resolves to; rejects with what it rejects (or throws) with.
   */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#max) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` never exceeds `max`.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}
