import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TEST_JWT_SECRET, useStack } from '../support/fixtures.ts';
import { startGatewayProcess } from '../support/processes.ts';

/**
 * The shell sessions of README.md and docs/*.md marked ```` ```sh runnable ````, run as written against
 * a started gateway on the embedded sandbox (the composition `npm start` runs, on the default wire
 * with the default 1 s enrolment delay), each block in one bash: every `$ ` line (with its `\`
 * continuation lines) is a command, the lines after it up to the next command its expected output.
 * An output line starting with one space continues the line above (long JSON wrapped for reading);
 * `…` in an expected line stands for any text. Card ids, aliases, tokens, secrets, request ids and
 * times are normalised on both sides; `127.0.0.1:4000` and `:4010` are the gateway's and the
 * sandbox's addresses. `npm start` and `npm run sandbox &` are not run again: they are what the
 * test started.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);

/** One command of a session and the output shown after it (continuation lines joined). */
interface Step {
  command: string;
  expected: string[];
}

/** A ```` ```sh runnable ```` block: where it is and its steps. */
interface RunnableBlock {
  where: string;
  steps: Step[];
}

/** Commands that start what the test has started already. */
const STARTED_BY_THE_TEST = /^(?:npm start|npm run sandbox)\s*&?$/;

/** The runnable blocks of one Markdown file. */
function runnableBlocks(file: string): RunnableBlock[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: RunnableBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```sh runnable') continue;
    // A block inside a list item is indented as the item's text: its lines lose that indentation.
    const indent = lines[i]!.length - lines[i]!.trimStart().length;
    const block: RunnableBlock = { where: `${file}:${i + 1}`, steps: [] };
    for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) {
      const line = lines[i]!.slice(indent);
      if (line.startsWith('$ ')) {
        let command = line.slice(2);
        while (command.endsWith('\\') && i + 1 < lines.length)
          command = `${command}\n${lines[++i]!.slice(indent)}`;
        block.steps.push({ command, expected: [] });
      } else if (line.trim() === '' || line.startsWith('#')) {
      } else if (line.startsWith(' ') && !line.startsWith('  ') && block.steps.at(-1)?.expected.length) {
        const expected = block.steps.at(-1)!.expected;
        expected[expected.length - 1] += line.slice(1);
      } else {
        block.steps.at(-1)?.expected.push(line);
      }
    }
    blocks.push(block);
  }
  return blocks;
}

/** The Markdown files whose blocks run: README.md and every guide of docs/. */
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const BLOCKS = FILES.flatMap(runnableBlocks);

/** Values that differ between runs, replaced by a name on both sides of the comparison. */
const NORMALISATIONS: readonly [RegExp, string][] = [
  [/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '<jwt>'],
  [/"access_token":"[^"]+"/g, '"access_token":"<token>"'],
  [/CRD[A-Za-z0-9]{20,}/g, 'CRD<id>'],
  [/\b(\d{6})[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*(\d{4})\b/g, '$1<alias>$2'],
  [/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<time>'],
  [/whsec_[A-Za-z0-9_-]+/g, 'whsec_<secret>'],
  [/whe_[A-Za-z0-9]+/g, 'whe_<id>'],
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>'],
];

function normalise(text: string): string {
  return NORMALISATIONS.reduce((out, [pattern, name]) => out.replace(pattern, name), text);
}

/** True when `actual` (normalised) is what `expected` shows, `…` standing for any text. */
function matches(expected: string, actual: string): boolean {
  const pattern = normalise(expected)
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`).test(actual);
}

const STEP_MARK = '@@cardgraph-docs-step@@';

describe('runnable shell blocks of README.md and docs/', () => {
  // The transcripts are of the default wire, whatever SANDBOX_WIRE the suite runs with.
  const t = useStack({ SANDBOX_WEBHOOK_DELAY_MS: '1000', SANDBOX_WIRE: 'documented' });

  it('finds the guides’ sessions', () => {
    expect(BLOCKS.map((block) => block.where.split(':')[0])).toEqual(
      expect.arrayContaining(['README.md', 'docs/partners.md', 'docs/mobile.md', 'docs/provider.md']),
    );
  });

  it.each(BLOCKS)(
    '$where runs as shown',
    async ({ steps }) => {
      const gateway = new URL(t.stack.url).host;
      const sandbox = new URL(t.stack.sandboxUrl).host;
      /** The doc's addresses as this run's, and back. */
      const toRun = (text: string) =>
        text.replaceAll('127.0.0.1:4000', gateway).replaceAll('127.0.0.1:4010', sandbox);
      const fromRun = (text: string) =>
        text.replaceAll(gateway, '127.0.0.1:4000').replaceAll(sandbox, '127.0.0.1:4010');
      const runnable = steps.filter((step) => !STARTED_BY_THE_TEST.test(step.command));
      const script = runnable.map((step) => `echo ${STEP_MARK}\n${toRun(step.command)}\n`).join('');
      const { stdout } = await run('bash', ['-e', '-o', 'pipefail', '-c', script], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          AUTH_JWT_SECRET: TEST_JWT_SECRET,
        },
        timeout: 60_000,
      });
      const outputs = stdout.split(`${STEP_MARK}\n`).slice(1);
      expect(outputs).toHaveLength(runnable.length);
      // Each step as shown, or as it ran when that differs: the failure shows every real output to
      // paste into the guide.
      const ran = runnable.map((step, i) => {
        const actual = normalise(fromRun(outputs[i]!))
          .split('\n')
          .filter((line) => line !== '');
        const shown = step.expected;
        const same = actual.length === shown.length && shown.every((line, k) => matches(line, actual[k]!));
        return { command: step.command, output: same ? shown : actual };
      });
      expect(ran).toEqual(runnable.map((step) => ({ command: step.command, output: step.expected })));
    },
    90_000,
  );

  it('README.md shows the start lines `npm start` writes (ports as the defaults)', async () => {
    const shown = /<!-- start-lines -->\n```\n([\s\S]*?)\n```/
      .exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))![1]!
      .split('\n');
    const gateway = await startGatewayProcess();
    try {
      const lines = gateway
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; url?: string; metrics?: string });
      const started = lines.filter((line) =>
        ['sandbox listening', 'cardgraph gateway listening'].includes(line.msg),
      );
      // Each address as the defaults would give it: the gateway on 4000, the sandbox on 4010, metrics on 9464.
      const ports: [string, string][] = started.flatMap((line) => [
        [new URL(line.url!).port, line.msg === 'sandbox listening' ? '4010' : '4000'],
        ...(line.metrics ? [[new URL(line.metrics).port, '9464'] as [string, string]] : []),
      ]);
      const asDefaults = started.map((line) =>
        ports.reduce(
          (text, [port, as]) =>
            text
              .replaceAll(`127.0.0.1:${port}/`, `127.0.0.1:${as}/`)
              .replaceAll(`127.0.0.1:${port}"`, `127.0.0.1:${as}"`),
          JSON.stringify(line),
        ),
      );
      // Each line as shown, or as written when that differs (the failure shows what to paste).
      expect(
        asDefaults.map((line, i) => (shown[i] !== undefined && matches(shown[i]!, line) ? shown[i] : line)),
      ).toEqual(shown);
    } finally {
      await gateway.stop();
    }
  });
});
