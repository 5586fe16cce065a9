import { onFirstStopSignal } from '../lib/stop-signals.ts';

/**
 * Stops the process's servers on SIGTERM or SIGINT and exits: 0 once `stop` resolves, 1 when it
 * rejects or has not finished within `timeoutMs` (`SHUTDOWN_TIMEOUT_MS`, the last resort of a
 * bounded shutdown: whatever still runs then is abandoned). Call it before the start, with a `stop`
 * that waits for the start: until a listener is registered, Node ends the process by the signal
 * itself (no clean stop, no exit code), and whoever sees the listening line may signal at once.
 * A signal during the stop is ignored ({@link onFirstStopSignal}: npm and a terminal both send one).
 */
export function stopOnSignals(stop: () => Promise<void>, timeoutMs: number): void {
  onFirstStopSignal(() => {
    setTimeout(() => {
      console.error(`shutdown did not finish within SHUTDOWN_TIMEOUT_MS (${timeoutMs} ms)`);
      process.exit(1);
    }, timeoutMs).unref();
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}
