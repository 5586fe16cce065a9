import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';

function startMain(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['src/main.ts'], {
    cwd: new URL('..', import.meta.url).pathname,
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: join(mkdtempSync(join(tmpdir(), 'cardgraph-main-')), 'data'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function readUntil(
  child: ChildProcess,
  pattern: RegExp,
  timeoutMs = 10_000,
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

describe('npm start (src/main.ts)', () => {
  it('starts the gateway on the embedded sandbox, serves /health and exits 0 on SIGTERM', async () => {
    const child = startMain({ PORT: '0', SANDBOX_PORT: '0', HOST: '127.0.0.1' });
    const [, url] = await readUntil(child, /"graphql":"(http:\/\/127\.0\.0\.1:\d+)\/graphql"/);
    const health = await request(`${url}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('refuses bad configuration with exit 1 and a message naming the variable', async () => {
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
});
