import { readFileSync } from 'node:fs';
import { buildSchema, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  compareWithRelease,
  describeChange,
  exampleOperationSources,
  operationErrors,
  RELEASED_SCHEMA_FILE,
} from '../../src/schema/compatibility.ts';
import { schema } from '../../src/schema/index.ts';
import { printGatewaySchema } from '../../src/schema/print.ts';

const releasedSdl = readFileSync(RELEASED_SCHEMA_FILE, 'utf8');
const packageVersion = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const changelog = readFileSync(new URL('../../CHANGELOG.md', import.meta.url), 'utf8');

describe('schema compatibility with the last release (schema.released.graphql)', () => {
  it('has no breaking change; its dangerous changes are the ones listed under Unreleased', async () => {
    const report = await compareWithRelease(schema);
    expect(report.breaking.map(describeChange)).toEqual([]);
    expect(report.dangerous.map(describeChange)).toEqual([
      "CardEvent: 'CardEvent' object implements 'Node' interface",
      "NetworkTokenEvent: 'NetworkTokenEvent' object implements 'Node' interface",
      "UnmappedNotificationReason.NOT_UTF8: Enum value 'NOT_UTF8' was added to enum 'UnmappedNotificationReason'",
    ]);
    const unreleased = changelog.slice(changelog.indexOf('## [Unreleased]'), changelog.indexOf('## [1.0.0]'));
    for (const change of report.dangerous) expect(unreleased).toContain(`\`${change.path}\``);
  });

  it('fails on a breaking change planted in the printed schema: a field made nullable, a field removed', async () => {
    const planted = printGatewaySchema()
      .replace(/^( {2}cardId: )String!$/m, '$1String')
      .replace(/^ {2}"""Last four digits of the PAN\."""\n {2}last4: String!\n/m, '');
    const report = await compareWithRelease(buildSchema(planted));
    expect(report.breaking.map(describeChange)).toEqual([
      "AccountUpdaterCard.cardId: Field 'AccountUpdaterCard.cardId' changed type from 'String!' to 'String'",
      "Card.last4: Field 'last4' was removed from object type 'Card'",
    ]);
  });

  it('is the released schema of the version in package.json, listed in CHANGELOG.md', async () => {
    expect(packageVersion).toBe('1.0.0');
    expect(changelog).toMatch(/^## \[1\.0\.0\] - 2026-11-27$/m);
    // The baseline is the printed schema of that release, unchanged: it builds and prints as committed.
    expect(`${printSchema(buildSchema(releasedSdl))}\n`).toBe(releasedSdl);
  });

  it('lists each of the 16 breaking changes of 1.0.0 in CHANGELOG.md with what a client does', async () => {
    const breaking = changelog.slice(
      changelog.indexOf('### Breaking', changelog.indexOf('## [1.0.0]')),
      changelog.indexOf('### Dangerous', changelog.indexOf('## [1.0.0]')),
    );
    // One bullet per change: the field, its old and new type, and what a client does.
    const entries = breaking.split('\n- ').slice(1);
    for (const entry of entries)
      expect(entry).toMatch(/^`[A-Za-z0-9.]+`: `[^`]+!` → `[^`!]+`\.\s+\*\*Client:\*\*\s+\S/);
    const listed = entries.map((entry) => entry.slice(1, entry.indexOf('`', 1)));
    expect(listed).toEqual([
      'Card.createdAt',
      'Card.updatedAt',
      'CardCheckResult.number',
      'CardEvent.card',
      'CardEvent.cardId',
      'CardEvent.createdAt',
      'CardEvent.newAccountNumber',
      'CardEvent.newExpiry',
      'CardEvent.oldAccountNumber',
      'CardEvent.oldExpiry',
      'NetworkTokenEvent.createdAt',
      'NetworkTokenEvent.expiresAt',
      'NetworkTokenEvent.networkTokenLast4',
      'NetworkTokenEvent.panAlias',
      'NetworkTokenEvent.state',
      'NetworkTokenEvent.token',
    ]);
  });
});

describe('operation check', () => {
  it('validates the example operations and every trusted document against the printed schema', () => {
    const sources = exampleOperationSources();
    expect(sources.length).toBeGreaterThan(1);
    expect(operationErrors(schema, sources)).toEqual([]);
  });

  it('reports an operation that selects a field the schema does not have', () => {
    expect(
      operationErrors(schema, [{ name: 'planted', source: 'query Planted { viewer { subject vault } }' }]),
    ).toEqual(['planted: Cannot query field "vault" on type "Viewer". Did you mean "vaults"?']);
  });
});

describe('descriptions speak to the schema readers', () => {
  it('cite no issue, no section sign and no document outside the repository', () => {
    const sdl = printGatewaySchema();
    const references = sdl
      .split('\n')
      .filter((line) =>
        /issue \d|§|sandbox contract|gap decision|interface specification|\bspec\b|contract §/i.test(line),
      );
    expect(references).toEqual([]);
  });
});
