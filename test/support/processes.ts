import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { vi } from 'vitest';
import { TEST_JWT_SECRET, TEST_WEBHOOK_SECRET } from './fixtures.ts';
import { freePort, keepOutput } from './local.ts';

/**
 * The gateway as a process: `node src/main.ts` as operators run it with `UPSTREAM=remote`, else
 * `node src/dev.ts` (`npm start`: the sandbox and the gateway on it) in a child process, so tests can SIGKILL it
 * mid-request, restart it on the same DATA_DIR and run several replicas against one Redis. The client
 * side those tests share (signed webhooks, graphql-ws subscribers, the history connection) talks to any
 * gateway by its base address and lives in test/support/fixtures.ts.
 */

const REPOSITORY_ROOT = new URL('../..', import.meta.url).pathname;
const LISTENING_LINE = /"graphql":"(http:\/\/127\.0\.0\.1:\d+)\/graphql"/;
/** Output kept per process for failure messages (characters); older output is dropped. */
const OUTPUT_KEPT_CHARS = 64 * 1024;

/** How a gateway process ended: its exit code, or the signal that ended it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Options of {@link startGatewayProcess}. */
export interface GatewayProcessOptions {
  /**
   * Configuration variables besides the defaults (PORT=0, SANDBOX_PORT=0, HOST=127.0.0.1, LOG_LEVEL=info,
   * WEBHOOK_SECRETS and AUTH_JWT_SECRET of test/support/fixtures.ts), e.g. EVENTS_BACKEND, REDIS_URL, WS_*.
   */
  env?: Record<string, string>;
  /** DATA_DIR of the sqlite event log; a fresh temporary directory when omitted. */
  dataDir?: string;
  /**
   * Longest wait for the "listening" log line (ms); default 30,000: a start takes a few seconds, more
   * while other test files run beside it on CI's 2 cores (how fast it starts is test/config's concern).
   */
  startTimeoutMs?: number;
}

/** A running gateway process (`node src/main.ts` or `node src/dev.ts`). */
export interface GatewayProcess {
  /** Base address, e.g. `http://127.0.0.1:41234` (GraphQL at `/graphql`, webhooks at `/webhooks/card-events`). */
  readonly url: string;
  readonly dataDir: string;
  readonly pid: number;
  /** Settles once the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /** The last 64 KiB of its stdout and stderr, for failure messages. */
  output(): string;
  /** Sends `signal` and resolves once the process has exited (at once when it already has). */
  kill(signal: 'SIGTERM' | 'SIGKILL'): Promise<ProcessExit>;
  /**
   * SIGTERM, then SIGKILL when it has not exited after `graceMs` (default 10,000); for afterAll hooks.
   */
  stop(graceMs?: number): Promise<ProcessExit>;
  /** Starts a new process with the same variables and DATA_DIR (on a new port); this one must have exited. */
  restart(): Promise<GatewayProcess>;
}

/**
 * Spawns the gateway process (src/dev.ts with the embedded sandbox unless `UPSTREAM=remote`, ports 0)
 * and waits for its JSON log line carrying
 * `"graphql":"http://127.0.0.1:<port>/graphql"`.
 * @throws Error with the process output when it exits or stays silent for `startTimeoutMs` first.
 */
export async function startGatewayProcess(options: GatewayProcessOptions = {}): Promise<GatewayProcess> {
  const dataDir = options.dataDir ?? join(mkdtempSync(join(tmpdir(), 'cardgraph-gateway-')), 'data');
  const env = options.env ?? {};
  // A remote upstream runs the production entry as operators do; the embedded sandbox only exists in
  // the development entry.
  const entry = env.UPSTREAM === 'remote' ? 'src/main.ts' : 'src/dev.ts';
  const child: ChildProcess = spawn(process.execPath, [entry], {
    cwd: REPOSITORY_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      SANDBOX_PORT: '0',
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      WEBHOOK_SECRETS: TEST_WEBHOOK_SECRET,
      AUTH_JWT_SECRET: TEST_JWT_SECRET,
      DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = keepOutput(child, OUTPUT_KEPT_CHARS);
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = LISTENING_LINE.exec(seen);
      if (match) {
        finish();
        resolve(match[1]!);
      }
    };
    const timer = setTimeout(() => {
      finish();
      child.kill('SIGKILL');
      reject(new Error(`gateway did not start within ${options.startTimeoutMs ?? 30_000} ms:\n${output()}`));
    }, options.startTimeoutMs ?? 30_000);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      finish();
      reject(new Error(`gateway exited (${code ?? signal}) before listening:\n${output()}`));
    };
    const finish = () => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });

  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const gateway: GatewayProcess = {
    url,
    dataDir,
    pid: child.pid!,
    exited,
    output,
    kill(signal) {
      if (!hasExited()) child.kill(signal);
      return exited;
    },
    async stop(graceMs = 10_000) {
      if (hasExited()) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
    async restart() {
      if (!hasExited()) throw new Error(`gateway ${child.pid} is still running; kill it before restarting`);
      return startGatewayProcess({ ...options, dataDir });
    },
  };
  return gateway;
}

/** A redis-server or redis-sentinel child process (Debian's packages, test/support/ensure-test-tools.sh). */
export interface RedisProcess {
  /** Its loopback port. */
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** Its working directory (append-only file, or the sentinel's rewritten configuration). */
  readonly dir: string;
  /** Its last 32 KiB of output, for failure messages. */
  output(): string;
  /** Sends `signal` and resolves once it has exited (at once when it already has). */
  kill(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

/**
 * Spawns `command args`, resolving once its output matches `ready` (within 10 s).
 * @throws Error with its output when it exits or stays silent first.
 */
async function spawnRedisProcess(
  command: string,
  args: string[],
  port: number,
  dir: string,
  ready: RegExp,
): Promise<RedisProcess> {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = keepOutput(child, 32 * 1024);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  await vi.waitFor(
    () => {
      if (hasExited())
        throw new Error(`${command} exited (${child.exitCode ?? child.signalCode}):\n${output()}`);
      if (!ready.test(output())) throw new Error(`${command} on ${port} not ready:\n${output()}`);
    },
    { timeout: 10_000, interval: 20 },
  );
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    output,
    kill(signal) {
      if (!hasExited()) child.kill(signal);
      return exited;
    },
  };
}

/** Options of {@link startRedisNode}. */
export interface RedisNodeOptions {
  /** Port (a free one when omitted); with `dir`, restarts a killed node where it was. */
  port?: number;
  dir?: string;
  /** Port of the primary on 127.0.0.1 to replicate; resolves once the first sync finished. */
  replicaOf?: number;
}

/**
 * A redis-server on 127.0.0.1 persisting with AOF (`appendfsync always`), as a primary or, with
 * `replicaOf`, as its replica; a node Sentinel manages may be reconfigured by it (replicas promoted,
 * an old primary turned replica).
 */
export async function startRedisNode(options: RedisNodeOptions = {}): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'cardgraph-redis-node-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  args.push('--appendonly', 'yes', '--appendfsync', 'always');
  // A primary waits 5 s (Redis's default) for more replicas before a full sync to a new one; these
  // replicas come one at a time, and the wait would only delay each (re)joining replica.
  args.push('--repl-diskless-sync-delay', '0');
  if (options.replicaOf !== undefined) args.push('--replicaof', '127.0.0.1', String(options.replicaOf));
  const ready =
    options.replicaOf !== undefined
      ? /MASTER <-> REPLICA sync: Finished with success/
      : /Ready to accept connections/;
  return spawnRedisProcess('redis-server', args, port, dir, ready);
}

/** Options of {@link startRedisSentinels}. */
export interface SentinelOptions {
  /** The monitored master's name (`REDIS_SENTINEL_MASTER`). */
  masterName: string;
  /** Port of the current primary on 127.0.0.1. */
  primaryPort: number;
  /** Sentinels that must agree the primary is down (default: a majority of `count`). */
  quorum?: number;
  /** `down-after-milliseconds`: unanswered this long, the primary is down to a sentinel. */
  downAfterMs: number;
  /** `failover-timeout` (ms). */
  failoverTimeoutMs: number;
}

/**
 * `count` redis-sentinel processes monitoring `primaryPort`, each with its own configuration file
 * (Sentinel rewrites it); resolves once every one knows all the others and the primary's replicas
 * (what a failover needs: a quorum that can agree, a replica to promote).
 */
export async function startRedisSentinels(
  count: number,
  options: SentinelOptions,
  expectedReplicas: number,
): Promise<RedisProcess[]> {
  const quorum = options.quorum ?? Math.floor(count / 2) + 1;
  const sentinels = await Promise.all(
    Array.from({ length: count }, async () => {
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'cardgraph-sentinel-'));
      const file = join(dir, 'sentinel.conf');
      const name = options.masterName;
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${options.primaryPort} ${quorum}`,
          `sentinel down-after-milliseconds ${name} ${options.downAfterMs}`,
          `sentinel failover-timeout ${name} ${options.failoverTimeoutMs}`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      return spawnRedisProcess('redis-sentinel', [file], port, dir, /\+monitor master/);
    }),
  );
  // Sentinels find each other through hello messages on the primary (every publish period).
  await vi.waitFor(
    async () => {
      for (const sentinel of sentinels) {
        const known = await redisCommand(sentinel.port, ['SENTINEL', 'SENTINELS', options.masterName]);
        const replicas = await redisCommand(sentinel.port, ['SENTINEL', 'REPLICAS', options.masterName]);
        if (
          (known as unknown[]).length !== count - 1 ||
          (replicas as unknown[]).length !== expectedReplicas
        ) {
          throw new Error(`sentinel ${sentinel.port} does not know the others and the replicas yet`);
        }
      }
    },
    { timeout: 15_000, interval: 200 },
  );
  return sentinels;
}

/** The primary's `host:port` as the sentinel on `port` names it now (`SENTINEL GET-MASTER-ADDR-BY-NAME`). */
export async function primaryAddressOf(port: number, masterName: string): Promise<string> {
  const [host, primaryPort] = (await redisCommand(port, [
    'SENTINEL',
    'GET-MASTER-ADDR-BY-NAME',
    masterName,
  ])) as [string, string];
  return `${host}:${primaryPort}`;
}

/** One command to the Redis (or sentinel) on 127.0.0.1:`port`, on a connection of its own. */
export async function redisCommand(port: number, command: string[]): Promise<unknown> {
  const client = createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.sendCommand(command);
  } finally {
    client.destroy();
  }
}

/** `INFO replication` of the Redis on 127.0.0.1:`port` as its fields (`role`, `master_port`, …). */
export async function replicationOf(port: number): Promise<Record<string, string>> {
  const info = String(await redisCommand(port, ['INFO', 'replication']));
  return Object.fromEntries(
    info
      .split('\r\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
  );
}
