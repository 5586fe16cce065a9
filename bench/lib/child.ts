/**
 * The side of a benchmarked server process that answers the bench orchestrator over the IPC
 * channel of `child_process.fork`: `{type:'stats'}` → process CPU time (µs, `process.cpuUsage`),
 * memory (bytes, `process.memoryUsage`, after a full GC when the process runs with `--expose-gc`)
 * and whatever `extra()` adds (e.g. the sandbox's request count).
 */
export interface ServerStats {
  /** User + system CPU time of this process since it started, µs. */
  cpuUs: number;
  /** Resident set size after GC, bytes. */
  rss: number;
  /** V8 heap in use after GC, bytes. */
  heapUsed: number;
  /** Memory of C++ objects bound to JS objects (socket buffers, Buffers), bytes. */
  external: number;
  [key: string]: number;
}

/** Message the orchestrator sends. */
export type StatsRequest = { type: 'stats'; id: number; gc?: boolean };

/**
 * Tells the orchestrator the server is listening (`{type:'ready', ...ready}`) and answers its
 * `stats` requests until the process exits. The channel is unref'd so it never keeps the process up.
 */
export function serveStats(ready: Record<string, unknown>, extra: () => Record<string, number> = () => ({})) {
  if (!process.send) throw new Error('bench servers run under child_process.fork');
  process.on('message', (message: StatsRequest) => {
    if (message?.type !== 'stats') return;
    if (message.gc && typeof globalThis.gc === 'function') {
      globalThis.gc();
      globalThis.gc();
    }
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    const stats: ServerStats = {
      cpuUs: cpu.user + cpu.system,
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      external: memory.external,
      ...extra(),
    };
    process.send!({ type: 'stats', id: message.id, stats });
  });
  process.send({ type: 'ready', ...ready });
  process.channel?.unref();
  process.on('disconnect', () => process.exit(0));
}
