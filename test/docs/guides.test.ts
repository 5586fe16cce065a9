import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/errors.ts';
import { errorCodesMarkdown } from '../../src/schema/error-codes.ts';

/**
 * README.md as the landing page and docs/ as one guide per audience: their size, their links, the
 * words they may not use, the generated error codes and the example code they show. The sessions
 * they mark runnable are run by test/docs/runnable-blocks.test.ts, the example apps by
 * test/docs/examples.test.ts.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const MARKDOWN = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The guides of this repository's docs/ that the README links, each for its audience. */
const GUIDES = [
  'docs/frontend.md',
  'docs/mobile.md',
  'docs/partners.md',
  'docs/supergraph.md',
  'docs/operators.md',
  'docs/provider.md',
  'docs/architecture.md',
  'docs/benchmarks.md',
  'docs/errors.md',
  'docs/glossary.md',
];

/**
 * Guides written beside this one, on other branches: a link to one of them is checked once the file
 * exists.
 */
const WRITTEN_ELSEWHERE = new Set([
  'docs/security.md',
  'docs/receiver-storage.md',
  'docs/configuration.md',
  'docs/transport-errors.md',
  'docs/transports.md',
  'docs/schema-policy.md',
  'docs/relay-pagination.md',
  'docs/defer.md',
  'docs/entity-batches.md',
  'examples/relay',
]);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings. */
function anchorsOf(path: string): Set<string> {
  return new Set(
    read(path)
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => slugOf(line.replace(/^#+ /, ''))),
  );
}

/** Relative link targets of a Markdown file (`[text](target)`), outside code blocks. */
function linksOf(path: string): string[] {
  const prose = read(path).replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/.test(target));
}

describe('README.md and docs/', () => {
  it('README.md is a landing page of at most 300 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('has one guide per audience, each linked from README.md', () => {
    const readmeLinks = linksOf('README.md');
    for (const guide of GUIDES) {
      expect(existsSync(join(ROOT, guide)), guide).toBe(true);
      expect(readmeLinks, guide).toContain(guide);
    }
  });

  it.each(MARKDOWN)(
    '%s cites no issue numbers and no sections of documents outside the repository',
    (path) => {
      const lines = read(path).split('\n');
      expect(lines.filter((line) => /\bissues? #?\d+|#\d+\b(?![-\w])/i.test(line))).toEqual([]);
      expect(lines.filter((line) => line.includes('§'))).toEqual([]);
    },
  );

  it.each(MARKDOWN)('%s links only to files and headings that exist', (path) => {
    const broken: string[] = [];
    for (const link of linksOf(path)) {
      const [file, anchor] = link.split('#') as [string, string | undefined];
      const target = file === '' ? path : normalize(join(dirname(path), file)).replace(/\/$/, '');
      if (!existsSync(join(ROOT, target))) {
        if (!WRITTEN_ELSEWHERE.has(target)) broken.push(link);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor)) broken.push(link);
    }
    expect(broken).toEqual([]);
  });

  it('docs/errors.md is what `npm run docs:errors` writes from the errors module', () => {
    expect(read('docs/errors.md')).toBe(errorCodesMarkdown());
  });

  it('docs/errors.md names every error class of src/errors.ts', () => {
    const classes = Object.entries(errors)
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof errors.GatewayError)
      .map(([name]) => name);
    expect(classes.length).toBeGreaterThan(15);
    const text = read('docs/errors.md');
    expect(classes.filter((name) => !text.includes(`\`${name}\``))).toEqual([]);
  });

  it('shows the example apps as they are: each `<!-- snippet: path -->` block equals its file', () => {
    const shown: string[] = [];
    for (const path of MARKDOWN) {
      for (const match of read(path).matchAll(/<!-- snippet: (\S+) -->\n```\w*\n([\s\S]*?)\n```/g)) {
        shown.push(match[1]!);
        expect(`${match[2]}\n`, `${path}: ${match[1]}`).toBe(read(match[1]!));
      }
    }
    expect(shown.sort()).toEqual([
      'examples/apollo/main.ts',
      'examples/mobile-resume/main.ts',
      'examples/urql/main.ts',
    ]);
  });

  it('tells readers to run entries through npm scripts or npx node, never a bare node src/…', () => {
    for (const path of MARKDOWN) {
      const bare = read(path)
        .split('\n')
        .filter((line) => /(?<!npx )\bnode (?:src|examples|bench)\//.test(line));
      expect(bare, path).toEqual([]);
    }
  });
});
