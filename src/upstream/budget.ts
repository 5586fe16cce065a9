import { UpstreamError } from './errors.ts';
import type { UpstreamCall, UpstreamHttp, UpstreamResponse } from './http.ts';

/**
 * How many upstream calls one GraphQL operation (or one event of a subscription) may still make
 * (`UPSTREAM_CALL_BUDGET`, issue 10 class 3). One per operation context (src/context.ts); counted
 * at the upstream client boundary by {@link budgetedHttp}, so every client and loader is covered.
 */
export class UpstreamCallBudget {
  readonly limit: number;
  #used = 0;

  /** @param limit calls allowed, at least 1. */
  constructor(limit: number) {
    this.limit = limit;
  }

  /** Calls made so far. */
  get used(): number {
    return this.#used;
  }

  /**
   * Counts one call about to be sent.
   * @throws UpstreamError code `upstream-budget-exceeded` (no status, not retryable) when the budget
   *   is spent; nothing is sent then.
   */
  charge(call: Pick<UpstreamCall<unknown>, 'area' | 'method' | 'url'>): void {
    if (this.#used >= this.limit) {
      throw new UpstreamError({
        area: call.area,
        code: 'upstream-budget-exceeded',
        retryable: false,
        detail: `this operation already made ${this.limit} upstream calls`,
      });
    }
    this.#used++;
  }

  /** Starts a new count (each event of a subscription gets the whole budget). */
  reset(): void {
    this.#used = 0;
  }
}

/**
 * `http` with every request charged to `budget` first (see {@link UpstreamCallBudget.charge}). The
 * pool, its deadline and its shutdown stay those of `http`.
 */
export function budgetedHttp(http: UpstreamHttp, budget: UpstreamCallBudget): UpstreamHttp {
  return {
    request<T>(call: UpstreamCall<T>): Promise<UpstreamResponse<T>> {
      try {
        budget.charge(call);
      } catch (error) {
        return Promise.reject(error);
      }
      return http.request(call);
    },
    close: (graceMs) => http.close(graceMs),
    abortInFlight: () => http.abortInFlight(),
  };
}
