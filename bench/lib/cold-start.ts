import { startServer } from './processes.ts';

/** Cold starts of one bench server: {@link measureColdStart}. */
export interface ColdStart {
  /** Median of {@link samplesMs}, ms. */
  medianMs: number;
  /** Each timed fork's ms from fork to its ready message, in the order they ran. */
  samplesMs: number[];
}

/**
 * Cold start of a bench server (issue 21 item 2), "fork to listening": the ms from the fork of
 * `bench/servers/<script>` to its ready message (as {@link startServer} measures it), for `forks`
 * forks run one after another, each on a fresh `env()` and SIGKILLed once ready; the median of them,
 * so one fork disturbed by the other work of a shared machine does not decide the figure.
 *
 * With `compileCacheDir`, every fork runs with Node's compile cache there (`NODE_COMPILE_CACHE`:
 * stripped TypeScript and V8 code cache), as the Docker image runs the gateway, after one untimed
 * fork that fills it (what the image's build step does); it stops through its IPC channel
 * (`process.exit` writes the cache). Without, the compile cache is off (`NODE_DISABLE_COMPILE_CACHE`),
 * whatever the environment says: a first start on a machine that never ran the server.
 * @throws Error when a fork exits or is not ready within startServer's timeout.
 */
export async function measureColdStart(
  name: string,
  script: string,
  env: () => Record<string, string>,
  options: { forks: number; compileCacheDir?: string },
): Promise<ColdStart> {
  const cache: Record<string, string> = options.compileCacheDir
    ? { NODE_COMPILE_CACHE: options.compileCacheDir }
    : { NODE_DISABLE_COMPILE_CACHE: '1' };
  if (options.compileCacheDir) {
    const warmUp = await startServer(`${name} (compile cache warm-up)`, script, { ...env(), ...cache });
    const exited = new Promise((resolve) => warmUp.child.once('exit', resolve));
    // Off the IPC channel, bench servers exit with process.exit(0) (bench/lib/child.ts).
    warmUp.child.disconnect();
    await exited;
  }
  const samplesMs: number[] = [];
  for (let fork = 0; fork < options.forks; fork++) {
    const server = await startServer(name, script, { ...env(), ...cache });
    samplesMs.push(Math.round(server.startMs));
    await server.stop('SIGKILL');
  }
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return { medianMs: sorted[Math.floor(sorted.length / 2)]!, samplesMs };
}
