import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * docker-compose.yml against the files it names, without Docker: every build's context, Dockerfile
 * and target stage, every file its Dockerfiles copy or run (present, and not left out by the build
 * context's ignore file), every host file it mounts, and the secrets its header recipe exports.
 * `docker compose up --build` failed once on a `target: gateway` that no Dockerfile stage was named.
 */

const ROOT = new URL('../..', import.meta.url).pathname;

interface ComposeService {
  build?: string | { context?: string; dockerfile?: string; target?: string };
  volumes?: string[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
}

/** One instruction of a Dockerfile, continuation lines joined: `COPY`, `["src", "./src"]`. */
interface Instruction {
  keyword: string;
  args: string;
}

/** The instructions of a Dockerfile (comments dropped, `\` continuations joined). */
function instructionsOf(text: string): Instruction[] {
  const joined = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    });
}

/** Stage names in order (`FROM image AS name`; an unnamed stage is `''`). */
function stagesOf(instructions: Instruction[]): string[] {
  return instructions
    .filter((i) => i.keyword === 'FROM')
    .map((i) => /\bAS\s+(\S+)$/i.exec(i.args)?.[1] ?? '');
}

/** The patterns of the ignore file BuildKit uses for `dockerfile` in `context`. */
function ignorePatternsOf(context: string, dockerfile: string): string[] {
  const beside = `${dockerfile}.dockerignore`;
  const file = existsSync(beside) ? beside : join(context, '.dockerignore');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** True when `path` (relative to the context) or a directory above it matches an ignore pattern. */
function isIgnored(path: string, patterns: string[]): boolean {
  const parts = path.replace(/^\.\//, '').replace(/\/$/, '').split('/');
  return patterns.some((pattern) => {
    const regex = new RegExp(
      `^${pattern
        .replace(/\/$/, '')
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')}$`,
    );
    return parts.some((_, i) => regex.test(parts.slice(0, i + 1).join('/')));
  });
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;

/** Every service that builds an image: its context, Dockerfile and target, resolved. */
const builds = Object.entries(compose.services).flatMap(([service, { build }]) => {
  if (build === undefined) return [];
  const spec = typeof build === 'string' ? { context: build } : build;
  const context = join(ROOT, spec.context ?? '.');
  const dockerfile = join(context, spec.dockerfile ?? 'Dockerfile');
  return [{ service, context, dockerfile, target: spec.target }];
});

describe('docker-compose.yml and the files it names', () => {
  it('builds the gateway replicas from the Dockerfile stage `gateway` and the sandbox from its own Dockerfile', () => {
    expect(
      builds.map(({ service, dockerfile, target }) => [service, relative(ROOT, dockerfile), target]),
    ).toEqual([
      ['gateway1', 'Dockerfile', 'gateway'],
      ['gateway2', 'Dockerfile', 'gateway'],
      ['sandbox', 'deploy/sandbox.Dockerfile', undefined],
    ]);
  });

  it.each(builds)(
    '$service: its context, Dockerfile and target stage exist',
    ({ context, dockerfile, target }) => {
      expect(statSync(context).isDirectory()).toBe(true);
      expect(existsSync(dockerfile), dockerfile).toBe(true);
      const stages = stagesOf(instructionsOf(readFileSync(dockerfile, 'utf8')));
      if (target !== undefined) expect(stages).toContain(target);
    },
  );

  it('names the Dockerfile stages, the gateway last (a plain `docker build .` makes the same image)', () => {
    expect(stagesOf(instructionsOf(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')))).toEqual([
      'build',
      'gateway',
    ]);
    expect(stagesOf(instructionsOf(readFileSync(join(ROOT, 'deploy/sandbox.Dockerfile'), 'utf8')))).toEqual([
      'sandbox',
    ]);
  });

  it.each(builds)(
    '$service: every file its Dockerfile copies or runs is in the build context, and earlier stages are named',
    ({ context, dockerfile }) => {
      const instructions = instructionsOf(readFileSync(dockerfile, 'utf8'));
      const ignored = ignorePatternsOf(context, dockerfile);
      const stages: string[] = [];
      const sources: string[] = [];
      // Where files copied from an earlier stage land (`COPY --from=build /build/dist ./dist`: dist/).
      const fromStages: string[] = [];
      for (const { keyword, args } of instructions) {
        if (keyword === 'FROM') stages.push(/\bAS\s+(\S+)$/i.exec(args)?.[1] ?? '');
        if (keyword === 'COPY') {
          const words = args.split(/\s+/);
          const from = words.find((word) => word.startsWith('--from='));
          const paths = words.filter((word) => !word.startsWith('--'));
          if (from) {
            expect(stages.slice(0, -1), args).toContain(from.slice('--from='.length));
            fromStages.push(`${paths.at(-1)!.replace(/^\.\//, '').replace(/\/$/, '')}/`);
          } else sources.push(...paths.slice(0, -1));
        }
      }
      // The command's script (`CMD ["node", "dist/main.js"]`) comes from the context or from a stage.
      const command = instructions.filter((i) => i.keyword === 'CMD').at(-1);
      const script = (JSON.parse(command!.args) as string[]).find((word) => /\.[jt]s$/.test(word));
      expect(script).toBeDefined();
      if (!fromStages.some((directory) => script!.startsWith(directory))) sources.push(script!);
      for (const source of sources) {
        expect(existsSync(join(context, source)), `${relative(ROOT, dockerfile)}: ${source} exists`).toBe(
          true,
        );
        expect(isIgnored(source, ignored), `${relative(ROOT, dockerfile)}: ${source} is not ignored`).toBe(
          false,
        );
      }
    },
  );

  it('keeps the sandbox out of the gateway image and in the sandbox image', () => {
    expect(isIgnored('src/sandbox/main.ts', ignorePatternsOf(ROOT, join(ROOT, 'Dockerfile')))).toBe(true);
    expect(
      isIgnored('src/sandbox/main.ts', ignorePatternsOf(ROOT, join(ROOT, 'deploy/sandbox.Dockerfile'))),
    ).toBe(false);
  });

  it('mounts host files that exist', () => {
    const mounts = Object.values(compose.services)
      .flatMap((service) => service.volumes ?? [])
      .map((volume) => volume.split(':')[0]!)
      .filter((source) => source.startsWith('./'));
    expect(mounts).toEqual(['./deploy/haproxy.cfg']);
    for (const mount of mounts) expect(existsSync(join(ROOT, mount)), mount).toBe(true);
  });

  it('exports in its header recipe (and docs/operators.md) every secret it requires, and starts detached', () => {
    const text = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
    const required = [...new Set([...text.matchAll(/\$\{(\w+):\?/g)].map((match) => match[1]))].sort();
    expect(required).toEqual(['CARDGRAPH_JWT_SECRET', 'CARDGRAPH_WEBHOOK_SECRET']);
    const exported = /^#\s+export (.+)$/m.exec(text)?.[1] ?? '';
    for (const name of required) expect(exported).toContain(`${name}=`);
    expect(text).toMatch(/^#\s+docker compose up -d --build$/m);
    // The operators' guide gives the same recipe.
    const guide = readFileSync(join(ROOT, 'docs/operators.md'), 'utf8');
    const guideExports = /^export (.+)$/m.exec(guide)?.[1] ?? '';
    for (const name of required) expect(guideExports).toContain(`${name}=`);
    expect(guide).toMatch(/^docker compose up -d --build$/m);
    expect(guide).toContain('TOKEN=$(AUTH_JWT_SECRET=$CARDGRAPH_JWT_SECRET npm run -s token');
  });
});
