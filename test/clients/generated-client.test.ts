import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildSchema, Kind, parse, print, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import * as generated from '../../src/client/generated/index.ts';
import manifest from '../../src/client/generated/persisted-documents.json' with { type: 'json' };

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const operationsText = readFileSync(new URL('../../src/client/operations.graphql', import.meta.url), 'utf8');
const operationNames = parse(operationsText).definitions.flatMap((d) =>
  d.kind === Kind.OPERATION_DEFINITION ? [d.name!.value] : [],
);

describe('generated client (src/client/generated)', () => {
  it.each(['nodenext', 'bundler'])(
    'a consumer compiles unchanged under moduleResolution %s',
    async (resolution) => {
      const { stdout } = await run(
        process.execPath,
        [tsc, '-p', `test/clients/consumer/tsconfig.${resolution}.json`],
        {
          cwd: root,
        },
      ).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
      expect(stdout).toBe('');
    },
    60_000,
  );

  it('exports a typed document for every example operation', () => {
    expect(operationNames).toContain('LiveCardEvents');
    expect(new Set(operationNames).size).toBe(operationNames.length);
    for (const name of operationNames) {
      const document = (generated as Record<string, unknown>)[`${name}Document`] as { kind: string };
      expect(document?.kind, name).toBe('Document');
    }
  });

  it('graphql() of one operation pasted from operations.graphql returns its typed document', () => {
    const meText = operationsText.slice(
      operationsText.indexOf('query Me {'),
      operationsText.indexOf('}\n}') + 3,
    );
    expect(generated.graphql(meText)).toBe(generated.MeDocument);
  });

  it('possibleTypes lists every member of Error and of each result union', () => {
    expect(generated.possibleTypes.Error).toContain('CardNotFoundError');
    expect(generated.possibleTypes.Error).toContain('InputValidationError');
    expect(generated.possibleTypes.QueryAccountUpdaterCardResult).toEqual(
      expect.arrayContaining(['QueryAccountUpdaterCardSuccess', 'CardNotFoundError']),
    );
  });

  it('the trusted-documents manifest holds each example operation once, valid against the schema, keyed by its sha256', async () => {
    const { createHash } = await import('node:crypto');
    const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
    const entries = Object.entries(manifest as Record<string, string>);
    expect(entries).toHaveLength(operationNames.length);
    for (const [id, text] of entries) {
      expect(id).toBe(`sha256:${createHash('sha256').update(text).digest('hex')}`);
      expect(validate(schema, parse(text))).toEqual([]);
    }
    const meHash = (generated.MeDocument as unknown as { __meta__: { hash: string } }).__meta__.hash;
    expect(print(parse((manifest as Record<string, string>)[meHash]!))).toContain('viewer');
  });
});
