import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServerStats, StatsRequest } from './child.ts';

/** A server process under measurement (bench/servers/*), started by {@link startServer}. */
export interface ServerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** What the server announced when ready, e.g. `{ url }`. */
  readonly ready: Record<string, unknown> & { url: string };
  /** ms from fork to the ready message (cold start, including module loading). */
  readonly startMs: number;
  /** Current CPU time and memory of the process (see bench/lib/child.ts); `gc` runs a full GC first. */
  stats(gc?: boolean): Promise<ServerStats>;
  /**
   * `signal` (SIGTERM by default: a graceful stop), then SIGKILL after 5 s; resolves when the process
   * has exited.
   */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

let nextId = 1;

/**
 * Forks `bench/servers/<script>` on this Node.js with `--expose-gc` and `env` added to the
 * environment, and waits (at most `timeoutMs`) for its ready message. With `BENCH_CPU_PROF_DIR` set
 * (`npm run bench -- --cpu-prof`), cardgraph and ingest floor processes write a V8 CPU profile there when they exit
 * (`stop` then uses SIGTERM, which they answer with a graceful exit, whatever signal is asked).
 * @throws Error when the process exits or the timeout passes first.
 */
export async function startServer(
  name: string,
  script: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<ServerProcess> {
  const started = performance.now();
  const child = fork(fileURLToPath(new URL(`../servers/${script}`, import.meta.url)), {
    env: { ...process.env, ...env },
    execArgv: [
      '--expose-gc',
      '--disable-warning=ExperimentalWarning',
      ...(profiled(script) ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<ServerProcess['ready']>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready within ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready`));
    });
    child.on('message', (message: { type: string; url: string }) => {
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      resolve(message as ServerProcess['ready']);
    });
  });
  const startMs = performance.now() - started;
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    name,
    child,
    ready,
    startMs,
    stats(gc = false) {
      const id = nextId++;
      return new Promise((resolve) => {
        const onMessage = (message: { type: string; id: number; stats: ServerStats }) => {
          if (message.type !== 'stats' || message.id !== id) return;
          child.off('message', onMessage);
          resolve(message.stats);
        };
        child.on('message', onMessage);
        child.send({ type: 'stats', id, gc } satisfies StatsRequest);
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(profiled(script) ? 'SIGTERM' : signal);
      const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(force);
    },
  };
}

/** True when `script`'s process writes a CPU profile (see {@link startServer}). */
function profiled(script: string): boolean {
  // The ingest floor too, to compare its profile with cardgraph's webhook path (issue 21 item 4).
  return (
    Boolean(process.env.BENCH_CPU_PROF_DIR) && (script === 'cardgraph.ts' || script === 'floor-ingest.ts')
  );
}
