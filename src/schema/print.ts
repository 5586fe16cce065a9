import { writeFileSync } from 'node:fs';
import { graphql, lexicographicSortSchema, printSchema } from 'graphql';
import { schema, subgraphSchema } from './index.ts';

/** The SDL committed as schema.graphql; a test fails when the file differs from it. */
export function printGatewaySchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}

/**
 * The subgraph SDL (`FEDERATION=on`): what `_service { sdl }` answers, with `@link` and `@key`, for
 * a schema registry or a composition (docs/supergraph.md).
 * @throws Error when the subgraph schema cannot answer `_service`.
 */
export async function printSubgraphSdl(): Promise<string> {
  const result = await graphql({ schema: await subgraphSchema(), source: '{ _service { sdl } }' });
  const sdl = (result.data as { _service?: { sdl?: string } } | null | undefined)?._service?.sdl;
  if (!sdl) throw new Error(`_service failed: ${result.errors?.map((e) => e.message).join('; ')}`);
  return sdl;
}

if (import.meta.main) {
  // `npm run -s schema -- --subgraph > cardgraph.graphql`: the subgraph SDL on stdout, nothing written.
  if (process.argv.includes('--subgraph')) process.stdout.write(`${await printSubgraphSdl()}\n`);
  else writeFileSync(new URL('../../schema.graphql', import.meta.url), printGatewaySchema());
}
