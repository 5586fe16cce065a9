import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The layering rules of .dependency-cruiser.mjs, as `npm run lint` runs them: the depcruise command of
 * the lint script, with the project's configuration, on a planted tree of a few modules in a temporary
 * directory. A clean tree passes, so each refusal below is the planted import's.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
const lintScript = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { lint: string } }
).scripts.lint;
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

/** The arguments of the lint script's depcruise step, e.g. `--config .dependency-cruiser.mjs src`. */
function depcruiseArgs(): string[] {
  const step = lintScript
    .split('&&')
    .map((part) => part.trim())
    .find((part) => part.startsWith('depcruise '));
  if (!step) throw new Error(`the lint script runs no depcruise: ${lintScript}`);
  return step.split(/\s+/).slice(1);
}

/** Runs the lint's depcruise on `files` (path → source) beside the project's config; its exit code and output. */
async function cruise(files: Record<string, string>): Promise<{ code: number; output: string }> {
  const directory = mkdtempSync(join(tmpdir(), 'cardgraph-layering-'));
  copyFileSync(join(ROOT, '.dependency-cruiser.mjs'), join(directory, '.dependency-cruiser.mjs'));
  copyFileSync(join(ROOT, 'tsconfig.json'), join(directory, 'tsconfig.json'));
  // The project's packages, for the rules about a package (the OpenTelemetry API's one copy).
  symlinkSync(join(ROOT, 'node_modules'), join(directory, 'node_modules'));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(directory, path)), { recursive: true });
    writeFileSync(join(directory, path), source);
  }
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [DEPCRUISE, ...depcruiseArgs()], {
      cwd: directory,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

/** A tree that keeps every rule: the server on the runtime, the runtime on lib. */
const clean = {
  'src/server/http.ts': "import { runtime } from '../runtime/index.ts';\nexport const http = runtime;\n",
  'src/runtime/index.ts': "import { log } from '../lib/logger.ts';\nexport const runtime = log;\n",
  'src/lib/logger.ts': 'export const log = 1;\n',
};

describe('npm run lint (dependency-cruiser)', () => {
  it('runs depcruise with the project configuration on src', () => {
    expect(depcruiseArgs()).toEqual(['--config', '.dependency-cruiser.mjs', 'src']);
  });

  it('passes a tree that keeps the layers', async () => {
    const { code, output } = await cruise(clean);
    expect(output).toContain('no dependency violations found (3 modules, 2 dependencies cruised)');
    expect(code).toBe(0);
  });

  it('fails on a planted cycle', async () => {
    const { code, output } = await cruise({
      ...clean,
      'src/lib/logger.ts': "import { level } from './level.ts';\nexport const log = level;\n",
      'src/lib/level.ts': "import type { log } from './logger.ts';\nexport const level = 1 as typeof log;\n",
    });
    expect(code).not.toBe(0);
    expect(output).toMatch(
      /error no-circular: src\/lib\/level\.ts →\s+src\/lib\/logger\.ts →\s+src\/lib\/level\.ts/,
    );
    expect(output).toContain('1 dependency violations (1 errors');
  });

  it('fails on a planted upward import, type-only included', async () => {
    const { code, output } = await cruise({
      ...clean,
      'src/lib/logger.ts':
        "import type { runtime } from '../runtime/index.ts';\nexport const log = 1;\nexport type R = typeof runtime;\n",
      'src/runtime/index.ts': 'export const runtime = 1;\n',
    });
    expect(code).not.toBe(0);
    expect(output).toContain(
      'error no-upward-import-from-foundation: src/lib/logger.ts → src/runtime/index.ts',
    );
  });

  it('fails when the gateway imports the sandbox', async () => {
    const { code, output } = await cruise({
      ...clean,
      'src/server/http.ts':
        "import { sandbox } from '../sandbox/sandbox.ts';\nexport const http = sandbox;\n",
      'src/sandbox/sandbox.ts': 'export const sandbox = 1;\n',
      'src/dev.ts': "import { sandbox } from './sandbox/sandbox.ts';\nexport const dev = sandbox;\n",
    });
    expect(code).not.toBe(0);
    expect(output).toContain('error sandbox-is-its-own-program: src/server/http.ts → src/sandbox/sandbox.ts');
    expect(output).not.toContain('src/dev.ts → src/sandbox/sandbox.ts');
  });
  it('fails on a value imported from @opentelemetry/api outside src/lib/otel-api.ts, not on a type', async () => {
    const otelApi =
      "import { createRequire } from 'node:module';\nexport const { trace } = createRequire(import.meta.url)('@opentelemetry/api');\n";
    const throughOne = await cruise({
      ...clean,
      'src/lib/otel-api.ts': otelApi,
      'src/lib/logger.ts':
        "import type { Tracer } from '@opentelemetry/api';\nimport { trace } from './otel-api.ts';\nexport const log: Tracer = trace.getTracer('x');\n",
    });
    expect(throughOne.output).toContain('no dependency violations found');
    expect(throughOne.code).toBe(0);
    const direct = await cruise({
      ...clean,
      'src/lib/logger.ts': "import { trace } from '@opentelemetry/api';\nexport const log = trace;\n",
    });
    expect(direct.code).not.toBe(0);
    expect(direct.output).toMatch(
      /error one-copy-of-the-opentelemetry-api: src\/lib\/logger\.ts → \S*@opentelemetry\/api\//,
    );
  });
});

describe('src/app.ts', () => {
  it('is a composition root of at most 150 lines that reads no process.env (src/config/index.ts does)', () => {
    const source = readFileSync(join(ROOT, 'src/app.ts'), 'utf8');
    expect(source.split('\n').length).toBeLessThanOrEqual(150);
    expect(source).not.toMatch(/process\.env/);
  });
});
