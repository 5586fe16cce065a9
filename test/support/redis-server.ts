import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './local.ts';

/** A real redis-server on a free loopback port, persisting with AOF (`appendfsync always`). */
export interface RedisServer {
  url: string;
  port: number;
  /** Its working directory (the append-only file lives here). */
  dir: string;
  stop(): Promise<void>;
}

/**
 * Starts redis-server (installed by `npm test`'s pretest step) and waits until it accepts commands.
 * `port` and `dir` restart a stopped server where it was (same address, same append-only file);
 * `args` are further command-line options (e.g. `['--maxmemory', '64mb']`).
 */
export async function startRedisServer(
  options: { port?: number; dir?: string; args?: readonly string[] } = {},
): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'cardgraph-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${output}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
