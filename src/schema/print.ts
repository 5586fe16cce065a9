import { writeFileSync } from 'node:fs';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './index.ts';

/** The SDL committed as schema.graphql; a test fails when the file differs from it. */
export function printGatewaySchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}

if (import.meta.main) {
  writeFileSync(new URL('../../schema.graphql', import.meta.url), printGatewaySchema());
}
