import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * Local plumbing of the process helpers (free ports, the kept output of a child process). Free of
 * vitest and of the fixtures on purpose: bench/run.ts loads test/support/redis-server.ts, which uses it,
 * outside any test runner.
 */

/** A free loopback TCP port. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Keeps the last `keptChars` characters of `child`'s stdout and stderr, for failure messages. Both
 * pipes are always drained: a full pipe would block a child's synchronous log writes.
 */
export function keepOutput(child: ChildProcess, keptChars: number): () => string {
  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-keptChars);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  return () => output;
}
