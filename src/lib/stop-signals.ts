/** The signals a process manager, `docker stop` or a terminal's Ctrl-C stops a process entry with. */
export type StopSignal = 'SIGTERM' | 'SIGINT';

/**
 * Calls `shutdown` with the first SIGTERM or SIGINT the process receives and ignores every later one,
 * for the whole life of the process. The listeners stay registered on purpose: npm forwards a SIGINT
 * or SIGTERM it receives to the script it runs (package.json's long-running scripts `exec` node, so
 * node is npm's child), and Ctrl-C in a terminal signals the whole process group, npm included, so
 * node receives it twice. Without a listener the second one would end the process by the signal,
 * cutting the graceful stop short; the caller bounds its stop with a timeout instead.
 */
export function onFirstStopSignal(shutdown: (signal: StopSignal) => void): void {
  let received = false;
  const receive = (signal: StopSignal) => {
    if (received) return;
    received = true;
    shutdown(signal);
  };
  process.on('SIGTERM', receive);
  process.on('SIGINT', receive);
}
