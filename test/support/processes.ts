import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_JWT_SECRET, TEST_WEBHOOK_SECRET } from './fixtures.ts';
import { keepOutput } from './local.ts';

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
  /** Longest wait for the "listening" log line (ms); default 15,000. */
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
      reject(new Error(`gateway did not start within ${options.startTimeoutMs ?? 15_000} ms:\n${output()}`));
    }, options.startTimeoutMs ?? 15_000);
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
