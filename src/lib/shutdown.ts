import { performance } from 'node:perf_hooks';
import type { Logger } from './logger.ts';

/**
 * The bounded shutdown of `SHUTDOWN_TIMEOUT_MS`: shortly before it (the cut-off, at most 2 s
 * earlier, at least two thirds of it), upstream calls still in flight are aborted and connections
 * still open closed, so an upstream that never finishes cannot hold the shutdown (src/main.ts
 * exits at the limit anyway).
 */
export interface Shutdown {
  /** Whether the shutdown has begun (readiness answers 503 from then on). */
  readonly begun: boolean;
  /** Cut-off in ms after the shutdown begins. */
  readonly cutOffMs: number;
  /** Registers what the cut-off does (abort upstream calls, close connections). */
  onCutOff(action: () => void): void;
  /** Time left until the cut-off (ms, ≥ 0); the whole cut-off before the shutdown begins. */
  remainingMs(): number;
  /** Begins the shutdown, arms the cut-off and runs `teardown`; the cut-off is disarmed after it. */
  run(teardown: () => Promise<void>): Promise<void>;
}

/** A {@link Shutdown} bounded by `timeoutMs` (`SHUTDOWN_TIMEOUT_MS`). */
export function createShutdown(timeoutMs: number, logger: Logger): Shutdown {
  const cutOffMs = Math.max(0, timeoutMs - Math.min(2_000, timeoutMs / 3));
  const actions: (() => void)[] = [];
  let startedAt: number | undefined;
  return {
    get begun() {
      return startedAt !== undefined;
    },
    cutOffMs,
    onCutOff: (action) => void actions.push(action),
    remainingMs: () => Math.max(0, cutOffMs - (startedAt === undefined ? 0 : performance.now() - startedAt)),
    async run(teardown) {
      startedAt = performance.now();
      const cutOff = setTimeout(() => {
        logger.warn({ cutOffMs }, 'shutdown: aborting upstream calls and connections still open');
        for (const action of actions) action();
      }, cutOffMs);
      try {
        await teardown();
      } finally {
        clearTimeout(cutOff);
      }
    },
  };
}
