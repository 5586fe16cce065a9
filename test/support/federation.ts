import { composeServices as composeWithApolloComposition } from '@apollo/composition';
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import { parse, print } from 'graphql';
import { CUSTOMERS_TYPE_DEFS } from '../../examples/customers/server.ts';

/**
 * Federation helpers of the tests of issue 22: cardgraph's subgraph SDL (what a router or registry
 * reads from `_service { sdl }`), and the supergraph composed from it and the example customers
 * subgraph (examples/customers/) with @theguild/federation-composition (what Hive runs) or with
 * @apollo/composition (what rover and GraphOS run). The supergraph is composed by the tests
 * themselves, never read from a committed copy.
 */

/** cardgraph's subgraph SDL (`FEDERATION=on`): `_service { sdl }` of the subgraph schema, run in process. */
export async function cardgraphSubgraphSdl(): Promise<string> {
  const { printSubgraphSdl } = await import('../../src/schema/print.ts');
  return printSubgraphSdl();
}

/** One subgraph to compose: its name in the supergraph, its SDL and the address the router calls. */
export interface SubgraphSource {
  name: string;
  sdl: string;
  url: string;
}

/**
 * The supergraph SDL of `subgraphs`.
 * @throws Error listing every composition error (code and message), so a test fails on any.
 */
export function composeSupergraph(subgraphs: readonly SubgraphSource[]): string {
  const result = composeServices(
    subgraphs.map((subgraph) => ({ name: subgraph.name, typeDefs: parse(subgraph.sdl), url: subgraph.url })),
  );
  if (compositionHasErrors(result)) {
    const lines = result.errors.map((error) => `${String(error.extensions?.code)}: ${error.message}`);
    throw new Error(`composition failed:\n${lines.join('\n')}`);
  }
  return result.supergraphSdl;
}

/**
 * The supergraph SDL of `subgraphs` composed by @apollo/composition (rover's and GraphOS'
 * composition, and the one Apollo Gateway and Apollo Router are documented with).
 * @throws Error listing every composition error (code and message), so a test fails on any.
 */
export function composeSupergraphWithApollo(subgraphs: readonly SubgraphSource[]): string {
  const result = composeWithApolloComposition(
    subgraphs.map((subgraph) => ({ name: subgraph.name, typeDefs: parse(subgraph.sdl), url: subgraph.url })),
  );
  if (result.errors) {
    const lines = result.errors.map((error) => `${String(error.extensions?.code)}: ${error.message}`);
    throw new Error(`composition failed:\n${lines.join('\n')}`);
  }
  return result.supergraphSdl;
}

/**
 * cardgraph (`cardgraphUrl`, its `/graphql`) and the customers example (`customersUrl`) composed,
 * by @theguild/federation-composition, or by @apollo/composition with `composer: 'apollo'`.
 * @throws Error on any composition error.
 */
export async function composeWithCustomers(
  cardgraphUrl: string,
  customersUrl: string,
  composer: 'guild' | 'apollo' = 'guild',
): Promise<string> {
  const subgraphs = [
    { name: 'cardgraph', sdl: await cardgraphSubgraphSdl(), url: cardgraphUrl },
    { name: 'customers', sdl: print(CUSTOMERS_TYPE_DEFS), url: customersUrl },
  ];
  return composer === 'apollo' ? composeSupergraphWithApollo(subgraphs) : composeSupergraph(subgraphs);
}
