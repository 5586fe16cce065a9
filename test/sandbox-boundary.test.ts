import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const SANDBOX = join(ROOT, 'src/sandbox');
/** Every module specifier of a static import, re-export or dynamic `import('…')` with a literal. */
const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

/** The repository-relative paths of every source module `entry` reaches through relative imports. */
function reachableModules(entry: string): Set<string> {
  const seen = new Set<string>();
  const pending = [resolve(ROOT, entry)];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!/\.(ts|js|mjs)$/.test(file)) continue;
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      // Packages (bare specifiers, node:) are not ours; the sandbox is only reachable by path.
      if (!specifier.startsWith('.')) continue;
      const target = resolve(dirname(file), specifier);
      if (!existsSync(target))
        throw new Error(`${relative(ROOT, file)} imports ${specifier}, which does not exist`);
      pending.push(target);
    }
  }
  return new Set([...seen].map((file) => relative(ROOT, file)));
}

describe('the production gateway', () => {
  it.each(['src/main.ts', 'src/app.ts'])('reaches no module under src/sandbox from %s', (entry) => {
    const modules = reachableModules(entry);
    // The walk itself works: it reaches the composition's parts.
    expect(modules).toContain('src/app.ts');
    expect(modules).toContain('src/server/graphql-ws.ts');
    expect(modules).toContain('src/plugins/viewer-auth.ts');
    expect([...modules].filter((module) => resolve(ROOT, module).startsWith(`${SANDBOX}/`))).toEqual([]);
  });

  it('is composed with the sandbox only by the development entry', () => {
    expect(reachableModules('src/dev.ts')).toContain('src/sandbox/sandbox.ts');
  });

  it("leaves the sandbox and the development entry out of the image's build context, and nothing it runs", () => {
    // .dockerignore of the gateway's Dockerfile: plain paths, one a line (no globs are used).
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    const isIgnored = (path: string) =>
      ignored.some((entry) => path === entry || path.startsWith(`${entry}/`));
    expect(isIgnored('src/sandbox/sandbox.ts')).toBe(true);
    expect(isIgnored('src/dev.ts')).toBe(true);
    expect([...reachableModules('src/main.ts')].filter(isIgnored)).toEqual([]);
  });
});
