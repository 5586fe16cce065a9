import { readFileSync } from 'node:fs';
import { type Change, CriticalityLevel, diff } from '@graphql-inspector/core';
import { buildSchema, type GraphQLSchema, parse, validate } from 'graphql';

/**
 * The schema's compatibility check (docs/schema-policy.md), run by the test command and by
 * `npm run -s schema:check`: the printed schema against the last released one (schema.released.graphql)
 * with `@graphql-inspector/core`, the comparison schema registries (GraphQL Hive, graphql-inspector's
 * CI action) run, and the example operations and the trusted-documents manifest validated against the
 * printed schema. A development tool: the gateway never imports it.
 */

/** The committed SDL of the last release, the baseline of {@link compareWithRelease}. */
export const RELEASED_SCHEMA_FILE = new URL('../../schema.released.graphql', import.meta.url);

/** Changes between two schemas by graphql-inspector's criticality. */
export interface CompatibilityReport {
  /** Changes that break a client built on the released schema (a removal, a nullability loosened, …). */
  breaking: Change[];
  /** Changes a client may not expect (a new enum value, a new union member, a new interface). */
  dangerous: Change[];
  /** Everything else (additions, descriptions, deprecations). */
  safe: Change[];
}

/** graphql-inspector's changes from `released` to `next`, by criticality. */
export async function compareSchemas(
  released: GraphQLSchema,
  next: GraphQLSchema,
): Promise<CompatibilityReport> {
  const changes = await diff(released, next);
  const of = (level: CriticalityLevel) => changes.filter((change) => change.criticality.level === level);
  return {
    breaking: of(CriticalityLevel.Breaking),
    dangerous: of(CriticalityLevel.Dangerous),
    safe: of(CriticalityLevel.NonBreaking),
  };
}

/**
 * {@link compareSchemas} from the released SDL (schema.released.graphql unless given) to `next`.
 * @throws the file system's error when the released SDL cannot be read, graphql's when it does not build.
 */
export function compareWithRelease(
  next: GraphQLSchema,
  releasedSdl: string = readFileSync(RELEASED_SCHEMA_FILE, 'utf8'),
): Promise<CompatibilityReport> {
  return compareSchemas(buildSchema(releasedSdl), next);
}

/** One operation document to validate: where it comes from (a file, a manifest hash) and its text. */
export interface OperationSource {
  name: string;
  source: string;
}

/**
 * The operation check: every document validated against `schema` with graphql-js' rules (what a
 * server runs before executing it). Returns one line per error, `name: message`; empty when all are
 * valid.
 */
export function operationErrors(schema: GraphQLSchema, documents: readonly OperationSource[]): string[] {
  return documents.flatMap(({ name, source }) => {
    try {
      return validate(schema, parse(source)).map((error) => `${name}: ${error.message}`);
    } catch (error) {
      return [`${name}: ${(error as Error).message}`];
    }
  });
}

/**
 * The example operations (src/client/operations.graphql, one document) and the trusted-documents
 * manifest codegen writes (src/client/generated/persisted-documents.json, hash → document), as
 * {@link OperationSource}s.
 * @throws the file system's error when either is missing (run `npm run codegen` first).
 */
export function exampleOperationSources(): OperationSource[] {
  const operations = new URL('../client/operations.graphql', import.meta.url);
  const manifest = JSON.parse(
    readFileSync(new URL('../client/generated/persisted-documents.json', import.meta.url), 'utf8'),
  ) as Record<string, string>;
  return [
    { name: 'src/client/operations.graphql', source: readFileSync(operations, 'utf8') },
    ...Object.entries(manifest).map(([hash, source]) => ({
      name: `persisted-documents.json ${hash}`,
      source,
    })),
  ];
}

/** One line of a report: the change's path and graphql-inspector's message. */
export function describeChange(change: Change): string {
  return `${change.path ?? '(schema)'}: ${change.message}`;
}

if (import.meta.main) {
  const { schema } = await import('./index.ts');
  const report = await compareWithRelease(schema);
  const invalid = operationErrors(schema, exampleOperationSources());
  for (const [title, changes] of [
    ['Breaking', report.breaking],
    ['Dangerous', report.dangerous],
  ] as const) {
    process.stdout.write(`${title} changes since the last release: ${changes.length}\n`);
    for (const change of changes) process.stdout.write(`  ${describeChange(change)}\n`);
  }
  process.stdout.write(`Invalid operations: ${invalid.length}\n`);
  for (const line of invalid) process.stdout.write(`  ${line}\n`);
  process.exitCode = report.breaking.length > 0 || invalid.length > 0 ? 1 : 0;
}
