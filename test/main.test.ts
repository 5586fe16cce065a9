import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from 'graphql-ws';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { EMBEDDED_DEV_JWT_SECRET } from '../src/config/index.ts';
import {
  postNotification,
  type Stack,
  startSandbox,
  startStack,
  TEST_JWT_SECRET,
  TEST_WEBHOOK_SECRET,
  type TestSandbox,
  testToken,
} from './support/fixtures.ts';
import { notification, randomCardId } from './support/notifications.ts';

/**
 * The production build of this test file (scripts/build.ts), made once before its cases in a
 * directory of its own inside the repository (packages left to node_modules resolve from there):
 * `${BUILD}/dist` is what the Docker image copies to /app/dist.
 */
const BUILD = fileURLToPath(new URL(`../.build/test-main-${process.pid}`, import.meta.url));
beforeAll(() => {
  execFileSync(process.execPath, [
    fileURLToPath(new URL('../scripts/build.ts', import.meta.url)),
    `${BUILD}/dist`,
  ]);
}, 60_000);
afterAll(() => rmSync(BUILD, { recursive: true, force: true }));

/**
 * `src/main.ts` (the production gateway), `src/dev.ts` (`npm start`: sandbox and gateway), or the
 * production build's `main.js` (the Docker image's command) by its path.
 */
type Entry = string;

function startMain(env: Record<string, string>, entry: Entry = 'src/main.ts'): ChildProcess {
  return spawn(process.execPath, [entry], {
    cwd: new URL('..', import.meta.url).pathname,
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: join(mkdtempSync(join(tmpdir(), 'cardgraph-main-')), 'data'),
      // A free metrics port: 9464 may be taken by another gateway on this machine.
      METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs `env` through the process entry until it exits; its exit code and stderr. */
async function refusedStart(
  env: Record<string, string>,
  entry: Entry = 'src/main.ts',
): Promise<{ code: number; stderr: string }> {
  const child = startMain(env, entry);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, 'exit')) as [number];
  return { code, stderr };
}

/** The exec-form command of the Dockerfile's HEALTHCHECK, e.g. ["node", "-e", "…"]. */
function dockerHealthcheck(): string[] {
  const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8').replace(/\\\n\s*/g, '');
  const command = /^HEALTHCHECK .*?\bCMD (\[.*\])$/m.exec(dockerfile)?.[1];
  if (!command) throw new Error('the Dockerfile has no exec-form HEALTHCHECK');
  return JSON.parse(command) as string[];
}

/** Runs the HEALTHCHECK command as Docker would (`node` from PATH) with `PORT`; its exit code. */
async function runHealthcheck(port: string): Promise<number> {
  const [executable, ...args] = dockerHealthcheck();
  expect(executable).toBe('node');
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', PORT: port },
    stdio: 'ignore',
  });
  const [code] = (await once(child, 'exit')) as [number];
  return code;
}

/** Files Node's compile cache holds under `directory` (one directory per Node version and flags). */
function compileCacheEntries(directory: string): number {
  let entries = 0;
  for (const versioned of readdirSync(directory)) entries += readdirSync(join(directory, versioned)).length;
  return entries;
}

async function readUntil(
  child: ChildProcess,
  pattern: RegExp,
  // Generous: the cases of a concurrent describe start their processes side by side.
  timeoutMs = 30_000,
): Promise<RegExpMatchArray> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in: ${output}`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
  });
}

/** The variables of a gateway on `sandbox` as its remote upstream. */
function remoteOn(sandbox: TestSandbox): Record<string, string> {
  return {
    UPSTREAM: 'remote',
    CARD_INTERFACE_URL: `${sandbox.url}/card-interface`,
    ACCOUNT_UPDATER_URL: `${sandbox.url}/account-updater`,
    CARD_ATTRIBUTES_URL: `${sandbox.url}/card-attributes`,
    ACCOUNTS_URL: `${sandbox.url}/accounts`,
    TOKEN_URL: `${sandbox.url}/oauth/token`,
    UPSTREAM_CREDENTIALS: 'tntsandbox1=sandbox-client-1:sandbox-secret-1',
    WEBHOOK_SECRETS: TEST_WEBHOOK_SECRET,
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
  };
}

// The cases start processes of their own, so each describe but `App.start` runs them side by side
// (test-context `expect` and `onTestFinished`, since concurrent cases share the module's hooks).
describe.concurrent('npm start (src/dev.ts)', { timeout: 60_000 }, () => {
  it('is what `npm start` runs', ({ expect }) => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.start).toBe('exec node --env-file-if-exists=.env src/dev.ts');
  });

  it.for(['SIGTERM', 'SIGINT'] as const)(
    'starts the sandbox and the gateway on it, serves /health and exits 0 on %s',
    async (signal, { expect, onTestFinished }) => {
      const child = startMain({ PORT: '0', SANDBOX_PORT: '0', HOST: '127.0.0.1' }, 'src/dev.ts');
      // A case that fails before its signal leaves no process running.
      onTestFinished(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      const [, url] = await readUntil(child, /"graphql":"(http:\/\/127\.0\.0\.1:\d+)\/graphql"/);
      const health = await request(`${url}/health`);
      expect(health.statusCode).toBe(200);
      await health.body.dump();
      // Ready means the upstream (the sandbox the entry started) answered its token request.
      const readiness = await request(`${url}/readiness`);
      expect(readiness.statusCode).toBe(200);
      await readiness.body.dump();
      child.kill(signal);
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    },
  );
});

describe.concurrent('the production gateway (src/main.ts)', { timeout: 60_000 }, () => {
  it.for([
    ['UPSTREAM unset', {}],
    ['UPSTREAM=embedded', { UPSTREAM: 'embedded' }],
  ] as [string, Record<string, string>][])(
    'refuses the development default, embedded (%s), pointing at npm start',
    async ([, env], { expect }) => {
      const { code, stderr } = await refusedStart({ PORT: '0', ...env });
      expect(code).toBe(1);
      expect(stderr).toMatch(
        /^ {2}UPSTREAM: embedded runs the development sandbox, .*`npm start` \(src\/dev\.ts\)/m,
      );
    },
  );

  it.for([
    ['Dockerfile', 'dist/main.js'],
    ['deploy/sandbox.Dockerfile', 'src/sandbox/main.ts'],
  ])(
    "%s's command runs node itself (exec form, no shell), so `docker stop`'s SIGTERM reaches %s",
    ([file, entry], { expect }) => {
      const dockerfile = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
      expect(dockerfile).toMatch(/^STOPSIGNAL SIGTERM$/m);
      expect(dockerfile.match(/^CMD .*$/gm)).toEqual([`CMD ["node", "${entry}"]`]);
    },
  );

  it('refuses bad configuration with exit 1 and a message naming the variable', async ({ expect }) => {
    const child = startMain({ PORT: 'not-a-port' });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr).toContain('Invalid configuration');
    expect(stderr).toContain('PORT');
  });

  it.for([
    ['without UPSTREAM', {}, /^ {2}UPSTREAM: required when NODE_ENV=production/m],
    [
      'with the development secret',
      { UPSTREAM: 'embedded', AUTH_JWT_SECRET: EMBEDDED_DEV_JWT_SECRET },
      /^ {2}AUTH_JWT_SECRET: the development secret is refused when NODE_ENV=production$/m,
    ],
    [
      'on the embedded sandbox with no secret of its own',
      { UPSTREAM: 'embedded' },
      /^ {2}AUTH_JWT_SECRET: AUTH_JWT_SECRET or AUTH_JWKS_URL is required when NODE_ENV=production/m,
    ],
    [
      'with the sandbox client credentials',
      {
        UPSTREAM: 'embedded',
        AUTH_JWT_SECRET: 'operator-secret-0123456789abcdef-0123456789',
        UPSTREAM_CREDENTIALS: 'tntsandbox1=sandbox-client-1:sandbox-secret-1',
      },
      /^ {2}UPSTREAM_CREDENTIALS: the sandbox client credentials/m,
    ],
  ] as [string, Record<string, string>, RegExp][])(
    'refuses NODE_ENV=production %s, naming the variable',
    async ([, env, message], { expect }) => {
      const { code, stderr } = await refusedStart({
        NODE_ENV: 'production',
        PORT: '0',
        SANDBOX_PORT: '0',
        ...env,
      });
      expect(code).toBe(1);
      expect(stderr).toMatch(/^Invalid configuration:$/m);
      expect(stderr).toMatch(message);
      expect(stderr).not.toContain(EMBEDDED_DEV_JWT_SECRET);
    },
  );
});

describe.concurrent("Node's compile cache (issue 21 item 2)", { timeout: 60_000 }, () => {
  it("is filled by the Dockerfile's build step, which loads the gateway's modules", async ({ expect }) => {
    const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8').replace(
      /\\\n\s*/g,
      '',
    );
    expect(dockerfile).toMatch(/^ENV NODE_COMPILE_CACHE=\/app\/\.node-compile-cache$/m);
    const script = /^RUN node --input-type=module -e "([^"]+)"/m.exec(dockerfile)?.[1];
    expect(script).toContain("readdirSync('./dist')");
    const cache = mkdtempSync(join(tmpdir(), 'cardgraph-compile-cache-'));
    // As the build runs it: from the application's directory (here the build's parent), with the
    // image's NODE_ENV.
    const child = spawn(process.execPath, ['--input-type=module', '-e', script!], {
      cwd: BUILD,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', NODE_COMPILE_CACHE: cache },
      stdio: 'ignore',
    });
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(0);
    expect(compileCacheEntries(cache)).toBeGreaterThan(100);
  });
});

/**
 * One production gateway on a remote upstream for the cases below, in their order, run from the
 * sources and from the production build the image runs: it serves, carries a signed card event
 * through the webhook receiver and the event log's writer thread to a graphql-ws subscriber, passes the
 * HEALTHCHECK and writes its compile cache while it runs; the last case stops it.
 */
describe.each([
  ['the sources (src/main.ts)', () => 'src/main.ts', 100],
  ['the production build (dist/main.js)', () => `${BUILD}/dist/main.js`, 10],
] as [string, () => string, number][])(
  'the production gateway from %s on a remote upstream, one process',
  (_, entry, cacheEntries) => {
    let sandbox: TestSandbox | undefined;
    let child: ChildProcess;
    let url: string;
    const cache = mkdtempSync(join(tmpdir(), 'cardgraph-compile-cache-'));
    beforeAll(async () => {
      sandbox = await startSandbox();
      child = startMain(
        { PORT: '0', HOST: '127.0.0.1', NODE_COMPILE_CACHE: cache, ...remoteOn(sandbox) },
        entry(),
      );
      [, url = ''] = await readUntil(child, /"graphql":"(http:\/\/127\.0\.0\.1:\d+)\/graphql"/);
    }, 60_000);
    afterAll(async () => {
      // The last case stops it; this only ends it when a case failed before.
      if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await sandbox?.stop();
    });

    it('starts and serves /health', async () => {
      const health = await request(`${url}/health`);
      expect(health.statusCode).toBe(200);
      await health.body.dump();
    });

    it('delivers a signed card event to a graphql-ws subscriber, through the durable event log', async () => {
      const cardId = randomCardId();
      const client = createClient({
        url: `${url.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${await testToken()}` },
        retryAttempts: 0,
      });
      try {
        const events = client.iterate<{ cardEvents: { id: string; type: string; cardId: string } }>({
          query: `subscription ($cardId: String) { cardEvents(cardId: $cardId) { id type cardId } }`,
          variables: { cardId },
        });
        let received: unknown;
        const reading = events.next().then(({ value }) => {
          received = value;
        });
        // A live subscription delivers what arrives after it is registered, which the client is not
        // told: a new notification (a fresh id) is posted until one reaches the subscriber.
        await vi.waitFor(
          async () => {
            if (received === undefined) {
              const answer = await postNotification(url, notification({ cardId }));
              expect(answer.status).toBe(200);
            }
            expect(received).toBeDefined();
          },
          { timeout: 15_000, interval: 250 },
        );
        await reading;
        expect(received).toEqual({
          data: { cardEvents: { id: expect.any(String), type: 'UPDATED', cardId } },
        });
        await events.return?.();
      } finally {
        await client.dispose();
      }
    });

    it("passes the Dockerfile's HEALTHCHECK while serving", async () => {
      expect(await runHealthcheck(new URL(url).port)).toBe(0);
    });

    it("writes Node's compile cache once it listens, not only when it exits", async () => {
      // While it runs: a replica that is killed later still leaves its next start the cache.
      await expect.poll(() => compileCacheEntries(cache), { timeout: 10_000 }).toBeGreaterThan(cacheEntries);
      expect(child.exitCode).toBeNull();
    });

    it('exits 0 on SIGTERM, and fails the HEALTHCHECK once stopped', async () => {
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      expect(await runHealthcheck(new URL(url).port)).toBe(1);
    });
  },
);

describe('App.start', () => {
  let stack: Stack;
  afterAll(async () => {
    await stack?.stop();
  });

  it('is refused a second time, and the running app keeps serving', async () => {
    stack = await startStack();
    await expect(stack.app.start()).rejects.toThrow('App.start() was already called: an App starts once');
    const health = await request(`${stack.url}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();
  });
});
