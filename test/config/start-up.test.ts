import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import {
  remoteUpstreamEnv,
  startSandbox,
  TEST_JWT_SECRET,
  TEST_WEBHOOK_SECRET,
} from '../support/fixtures.ts';

/**
 * The entries as a reader starts them, in child processes: the npm scripts' flags (`.env`), an env file
 * of empty values, and a taken port, which ends the start with one line naming the variable.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
const SCRIPTS = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;
const LISTENING = /"graphql":"http:\/\/127\.0\.0\.1:(\d+)\/graphql"/;

/** Options of {@link run}. */
interface RunOptions {
  /** Working directory; the repository root by default. */
  cwd?: string;
  /** What `matched` waits for in stdout; the gateway's listening line by default. */
  pattern?: RegExp;
  /** The executable `args` are given to; this Node by default. */
  command?: string;
  /** A process group of its own (pid = group id), to signal as a terminal does; off by default. */
  detached?: boolean;
}

/** Runs `args` with `command` in `cwd`; resolves `matched` at the first `pattern` in stdout, or at exit. */
function run(args: string[], env: Record<string, string>, options: RunOptions = {}) {
  const { cwd = ROOT, pattern = LISTENING, command = process.execPath, detached = false } = options;
  const child = spawn(command, args, {
    cwd,
    detached,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = once(child, 'exit').then(([code]) => code as number);
  const matched = new Promise<RegExpMatchArray | undefined>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = stdout.match(pattern);
      if (match) resolve(match);
    });
    void exited.then(() => resolve(undefined));
  });
  return {
    pid: child.pid!,
    matched,
    exited,
    stderr: () => stderr,
    stdout: () => stdout,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * `exec node <flags> <entry>` of an npm script, e.g. `exec node --env-file-if-exists=.env src/dev.ts`,
 * as the argv of node with `entry` absolute.
 */
function scriptArgs(script: string): string[] {
  const [exec, node, ...args] = SCRIPTS[script]!.split(' ');
  expect([exec, node]).toEqual(['exec', 'node']);
  const entry = args.pop()!;
  return [...args, join(ROOT, entry)];
}

const dataDir = () => join(mkdtempSync(join(tmpdir(), 'cardgraph-start-')), 'data');

/** A TCP listener holding a port on 127.0.0.1. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as { port: number }).port, server };
}

const held: Server[] = [];
afterAll(() => {
  for (const server of held) server.close();
});

describe('npm scripts', () => {
  it('run every entry a reader starts with the Node of the devDependencies, reading .env where a person runs them', () => {
    // The servers `exec` node: the shell npm runs a script in is replaced, so npm's child is node.
    expect(SCRIPTS.start).toBe('exec node --env-file-if-exists=.env src/dev.ts');
    expect(SCRIPTS.serve).toBe('exec node src/main.ts');
    expect(SCRIPTS.sandbox).toBe('exec node --env-file-if-exists=.env src/sandbox/main.ts');
    expect(SCRIPTS.token).toBe('node --env-file-if-exists=.env src/auth/token-cli.ts');
    expect(SCRIPTS['example:customers']).toBe('exec node examples/customers/server.ts');
  });
});

/** The parent pid of process `pid` (Linux /proc), `undefined` once it has exited and been reaped. */
function parentPid(pid: number): number | undefined {
  try {
    // `pid (comm) state ppid …`: comm may hold spaces, so read after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** SIGKILLs process `pid` unless it has exited: no gateway outlives a failed case. */
function killIfLeft(pid: number): void {
  if (parentPid(pid) !== undefined) process.kill(pid, 'SIGKILL');
}

/** The variables of an npm script's entry on free ports; npm makes no registry request (update check). */
function npmEnv(): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    SANDBOX_PORT: '0',
    METRICS_PORT: '0',
    DATA_DIR: dataDir(),
    npm_config_update_notifier: 'false',
  };
}

/** The gateway's listening line and its pid (pino writes `pid` before `msg`). */
const GATEWAY_PID = /"pid":(\d+),[^\n]*"msg":"cardgraph gateway listening"/;

// Each case starts processes of its own, so the describes below run their cases side by side
// (test-context `expect` and `onTestFinished`: concurrent cases share the module's hooks).
describe.concurrent('a SIGTERM to the npm process alone (docker stop, systemd, a supervisor)', {
  timeout: 120_000,
}, () => {
  // The ready line with the pid, and the line of the clean stop.
  it.for([
    ['start', GATEWAY_PID, '"msg":"cardgraph gateway stopped"'],
    ['serve', GATEWAY_PID, '"msg":"cardgraph gateway stopped"'],
    ['sandbox', /"pid":(\d+),[^\n]*"msg":"sandbox ready"/, '"msg":"sandbox stopping"'],
  ] as [string, RegExp, string][])(
    'stops `npm run %s` cleanly: npm and node exit 0, no node is left',
    async ([script, ready, stopLine], { expect, onTestFinished }) => {
      const env = npmEnv();
      if (script === 'serve') {
        const sandbox = await startSandbox();
        onTestFinished(async () => {
          await sandbox.stop();
        });
        Object.assign(env, remoteUpstreamEnv(sandbox.url), {
          WEBHOOK_SECRETS: TEST_WEBHOOK_SECRET,
          AUTH_JWT_SECRET: TEST_JWT_SECRET,
        });
      }
      const npm = run(['run', script], env, { pattern: ready, command: 'npm' });
      onTestFinished(async () => {
        await npm.stop();
      });
      expect(await npm.matched, npm.stderr()).toBeDefined();
      const node = Number((await npm.matched)?.[1]);
      // Registered after npm's stop, so it runs before it.
      onTestFinished(() => killIfLeft(node));
      // No shell between npm and node: npm's forwarded signal reaches node itself.
      expect(parentPid(node)).toBe(npm.pid);
      process.kill(npm.pid, 'SIGTERM');
      expect(await npm.exited, npm.stdout() + npm.stderr()).toBe(0);
      expect(npm.stdout()).toContain(stopLine);
      await expect.poll(() => parentPid(node)).toBeUndefined();
    },
  );

  it('stops `npm start` cleanly on Ctrl-C too: a SIGINT to the whole process group reaches node twice, from the terminal and from npm', async ({
    expect,
    onTestFinished,
  }) => {
    const listening = /"pid":(\d+),[^\n]*"url":"(http:[^"]+)"[^\n]*"msg":"cardgraph gateway listening"/;
    const npm = run(['start'], npmEnv(), { pattern: listening, command: 'npm', detached: true });
    onTestFinished(async () => {
      await npm.stop();
    });
    const [, pid, url] = (await npm.matched) ?? [];
    expect(url, npm.stderr()).toBeDefined();
    const node = Number(pid);
    onTestFinished(() => killIfLeft(node));
    // Serving and idle, as when a person stops it: it handles the first SIGINT before npm's arrives.
    const health = await request(`${url}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    // As a terminal does: the group's id is its leader's pid, npm's.
    process.kill(-npm.pid, 'SIGINT');
    expect(await npm.exited, npm.stdout() + npm.stderr()).toBe(0);
    expect(npm.stdout()).toContain('"msg":"cardgraph gateway stopped"');
    await expect.poll(() => parentPid(node)).toBeUndefined();
  });
});

describe.concurrent('the stop signals of the entries (onFirstStopSignal)', () => {
  it('start one stop and ignore every later SIGINT or SIGTERM, which would otherwise end the process by the signal', async ({
    expect,
  }) => {
    // A process that stops as the entries do; SIGUSR2 ends its stop with exit 0.
    const script = `
      import { onFirstStopSignal } from ${JSON.stringify(join(ROOT, 'src/lib/stop-signals.ts'))};
      onFirstStopSignal((signal) => {
        console.log('stopping on ' + signal);
        process.on('SIGUSR2', () => process.exit(0));
      });
      setInterval(() => {}, 60_000);
      console.log('waiting');`;
    const started = run(['--input-type=module', '-e', script], {}, { pattern: /waiting/ });
    expect(await started.matched, started.stderr()).toBeDefined();
    process.kill(started.pid, 'SIGINT');
    await expect.poll(() => started.stdout()).toContain('stopping on SIGINT\n');
    // All three are pending before it runs again: a default action would end it before the exit.
    process.kill(started.pid, 'SIGINT');
    process.kill(started.pid, 'SIGTERM');
    process.kill(started.pid, 'SIGUSR2');
    expect(await started.exited, started.stderr()).toBe(0);
    expect(started.stdout()).toBe('waiting\nstopping on SIGINT\n');
  });
});

describe.concurrent('npm start', { timeout: 120_000 }, () => {
  // Each case stops its processes; `onTestFinished` stops them too when an assertion failed first.
  it('reads .env in the directory it runs in', async ({ expect, onTestFinished }) => {
    const directory = mkdtempSync(join(tmpdir(), 'cardgraph-dotenv-'));
    const { port, server } = await holdPort();
    server.close();
    await once(server, 'close');
    writeFileSync(join(directory, '.env'), `PORT=${port}\nHOST=127.0.0.1\nSANDBOX_PORT=0\nMETRICS_PORT=0\n`);
    const started = run(scriptArgs('start'), { DATA_DIR: dataDir() }, { cwd: directory });
    onTestFinished(async () => {
      await started.stop();
    });
    expect((await started.matched)?.[1], started.stderr()).toBe(String(port));
    expect(await started.stop()).toBe(0);
  });

  // A SIGTERM after the listening line: the other cases' `stop()`.
  it('starts without a .env, and stops with exit 0 on a SIGTERM during the start, before the gateway listens', async ({
    expect,
    onTestFinished,
  }) => {
    const env = { DATA_DIR: dataDir(), PORT: '0', HOST: '127.0.0.1', SANDBOX_PORT: '0', METRICS_PORT: '0' };
    const started = run(scriptArgs('start'), env, {
      cwd: mkdtempSync(join(tmpdir(), 'cardgraph-no-dotenv-')),
      pattern: /"msg":"sandbox listening"/,
    });
    onTestFinished(async () => {
      await started.stop();
    });
    expect(await started.matched, started.stderr()).toBeDefined();
    expect(await started.stop(), started.stderr()).toBe(0);
    // It started: the gateway listened before it stopped.
    expect(started.stdout()).toMatch(LISTENING);
  });

  it('takes .env.example as an env file, and one with every variable empty (each is unset)', async ({
    expect,
    onTestFinished,
  }) => {
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    const directory = mkdtempSync(join(tmpdir(), 'cardgraph-empty-env-'));
    const emptied = join(directory, 'empty.env');
    // Each variable's `# NAME=default` line, which ends its paragraph, as `NAME=`.
    writeFileSync(emptied, example.replace(/^# ([A-Z][A-Z0-9_]*)=\S*$(?=\n(?:\n|$))/gm, '$1='));
    expect(readFileSync(emptied, 'utf8')).toMatch(/^CARD_INTERFACE_URL=$/m);
    // Variables given to the process win over an env file's: the ports stay free ones.
    const env = { PORT: '0', HOST: '127.0.0.1', SANDBOX_PORT: '0', METRICS_PORT: '0' };
    // Side by side, each on a data directory of its own.
    await Promise.all(
      [join(ROOT, '.env.example'), emptied].map(async (file) => {
        const started = run([`--env-file=${file}`, join(ROOT, 'src/dev.ts')], {
          ...env,
          DATA_DIR: dataDir(),
        });
        onTestFinished(async () => {
          await started.stop();
        });
        expect(await started.matched, started.stderr()).toBeDefined();
        expect(started.stderr()).toBe('');
        expect(await started.stop()).toBe(0);
      }),
    );
  });
});

describe.concurrent('a taken port', { timeout: 120_000 }, () => {
  it.for([
    ['PORT', 'src/dev.ts'],
    ['SANDBOX_PORT', 'src/dev.ts'],
    ['METRICS_PORT', 'src/dev.ts'],
    ['SANDBOX_PORT', 'src/sandbox/main.ts'],
  ] as [string, string][])(
    '%s stops %s with one line naming the variable and the port, no stack trace',
    async ([variable, entry], { expect }) => {
      const { port, server } = await holdPort();
      held.push(server);
      const env = {
        PORT: '0',
        HOST: '127.0.0.1',
        SANDBOX_PORT: '0',
        METRICS_PORT: '0',
        METRICS_HOST: '127.0.0.1',
        DATA_DIR: dataDir(),
        [variable]: String(port),
      };
      const started = run([join(ROOT, entry)], env);
      expect(await started.exited).toBe(1);
      expect(started.stderr()).toBe(
        `${variable}: port ${port} on 127.0.0.1 is already in use: stop what listens there or set ${variable} to another port (0 picks a free one)\n`,
      );
    },
  );

  it('PORT stops the production entry (npm run serve) the same way', async ({ expect, onTestFinished }) => {
    const sandbox = await startSandbox();
    onTestFinished(async () => {
      await sandbox.stop();
    });
    const { port, server } = await holdPort();
    held.push(server);
    const started = run(scriptArgs('serve'), {
      UPSTREAM: 'remote',
      CARD_INTERFACE_URL: `${sandbox.url}/card-interface`,
      ACCOUNT_UPDATER_URL: `${sandbox.url}/account-updater`,
      CARD_ATTRIBUTES_URL: `${sandbox.url}/card-attributes`,
      ACCOUNTS_URL: `${sandbox.url}/accounts`,
      TOKEN_URL: `${sandbox.url}/oauth/token`,
      UPSTREAM_CREDENTIALS: 'tntsandbox1=sandbox-client-1:sandbox-secret-1',
      WEBHOOK_SECRETS: TEST_WEBHOOK_SECRET,
      AUTH_JWT_SECRET: TEST_JWT_SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      DATA_DIR: dataDir(),
    });
    expect(await started.exited).toBe(1);
    expect(started.stderr()).toBe(
      `PORT: port ${port} on 127.0.0.1 is already in use: stop what listens there or set PORT to another port (0 picks a free one)\n`,
    );
  });
});
