import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { testToken, useStack } from '../support/fixtures.ts';

/**
 * The client apps of examples/ that docs/frontend.md and docs/mobile.md show: compiled in strict
 * TypeScript (examples/tsconfig.json) and run as a reader runs them (`npx tsc -p examples/tsconfig.json`, then
 * `npx node examples/.build/examples/<app>/main.js` with `TOKEN` and `GRAPHQL_URL`) against a started gateway on the embedded sandbox.
 */

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

describe('examples/ client apps', () => {
  // Enrolment events 2 s after the mutation: the Apollo app's read right after it sees ENROLLING.
  const t = useStack({ SANDBOX_WEBHOOK_DELAY_MS: '2000' });

  it('compile in strict TypeScript', async () => {
    const tsc = await run(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '-p', 'examples/tsconfig.json'],
      {
        cwd: ROOT,
      },
    ).catch((error: { stdout: string; code: number }) => ({ stdout: error.stdout, code: error.code }));
    expect(tsc.stdout).toBe('');
    expect(existsSync(join(ROOT, 'examples/.build/examples/apollo/main.js'))).toBe(true);
  }, 60_000);

  /** Runs the compiled examples/<app>/main.ts with a fresh tntsandbox1 token; its stdout lines, parsed. */
  async function runExample(app: string): Promise<unknown[]> {
    const token = await testToken({ vaults: ['tntsandbox1'] });
    const { stdout } = await run(process.execPath, [`examples/.build/examples/${app}/main.js`], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', TOKEN: token, GRAPHQL_URL: `${t.stack.url}/graphql` },
      timeout: 30_000,
    });
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  }

  it('Apollo Client: enrols, reads the card back, and gets the typed error of an unknown card', async () => {
    expect(await runExample('apollo')).toEqual([
      { enrolled: 'ENROLLING' },
      { read: 'ENROLLING' },
      { error: 'card-not-found' },
    ]);
  }, 40_000);

  it('urql with graphcache: reads the viewer and the typed error of an unknown card', async () => {
    expect(await runExample('urql')).toEqual([{ vaults: ['tntsandbox1'] }, { error: 'card-not-found' }]);
  }, 40_000);

  it('mobile resume: a live event, then after a disconnect the missed one, with no duplicate', async () => {
    expect(await runExample('mobile-resume')).toEqual([
      { live: 'ENROLLED' },
      { resumed: 'ENROLLED', duplicates: 0 },
    ]);
  }, 40_000);

  it('refuse to start without TOKEN, naming it', async () => {
    const failure = await run(process.execPath, ['examples/.build/examples/urql/main.js'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
    }).catch((error: { stderr: string; code: number }) => error);
    expect((failure as { code: number }).code).toBe(1);
    expect((failure as { stderr: string }).stderr).toContain('TOKEN is not set');
  });
});
