import { print } from 'graphql';
import { describe, expect, it } from 'vitest';
import { CUSTOMERS_TYPE_DEFS } from '../../examples/customers/server.ts';
import {
  cardgraphSubgraphSdl,
  composeSupergraph,
  composeSupergraphWithApollo,
  composeWithCustomers,
} from '../support/federation.ts';

/**
 * Composition checked in the test command (issue 22 item 2): cardgraph's subgraph SDL (`_service
 * { sdl }` with FEDERATION=on) composes with the example customers subgraph (examples/customers/,
 * which extends `Card @key(fields: "cardId")`) under @theguild/federation-composition; any
 * composition error fails the test.
 */
describe('composition with the customers example subgraph', () => {
  it('composes into a supergraph where Customer.card joins cardgraph’s Card by cardId', async () => {
    const supergraph = await composeWithCustomers(
      'http://cardgraph.internal/graphql',
      'http://customers.internal/graphql',
    );
    const lines = supergraph.split('\n').map((line) => line.trim());
    expect(lines).toContain(
      'CARDGRAPH @join__graph(name: "cardgraph", url: "http://cardgraph.internal/graphql")',
    );
    expect(lines).toContain(
      'CUSTOMERS @join__graph(name: "customers", url: "http://customers.internal/graphql")',
    );
    // Card: resolvable by cardgraph, referenced by the customers subgraph.
    const header = (type: string) => lines.find((line) => line.startsWith(`type ${type} `));
    expect(header('Card')).toBe(
      'type Card implements Node @join__type(graph: CARDGRAPH, key: "cardId") @join__type(graph: CUSTOMERS, key: "cardId", resolvable: false) @join__implements(graph: CARDGRAPH, interface: "Node") {',
    );
    expect(header('Customer')).toBe('type Customer @join__type(graph: CUSTOMERS, key: "id") {');
    expect(lines).toContain('card: Card');
    // cardgraph's other entities.
    expect(header('AccountUpdaterCard')).toBe(
      'type AccountUpdaterCard implements Node @join__type(graph: CARDGRAPH, key: "cardId") @join__implements(graph: CARDGRAPH, interface: "Node") {',
    );
    expect(header('NetworkToken')).toBe('type NetworkToken @join__type(graph: CARDGRAPH, key: "panAlias") {');
    expect(header('CardEvent')).toBe(
      'type CardEvent implements Node @join__type(graph: CARDGRAPH, key: "id") @join__implements(graph: CARDGRAPH, interface: "Node") {',
    );
    expect(supergraph).toMatch(/cardEvents\(/);
  });

  it('fails on a composition error (a customers Card whose key field disagrees with cardgraph’s)', async () => {
    const broken = print(CUSTOMERS_TYPE_DEFS).replace('cardId: String!', 'cardId: Int!');
    expect(broken).toContain('cardId: Int!');
    const sdl = await cardgraphSubgraphSdl();
    expect(() =>
      composeSupergraph([
        { name: 'cardgraph', sdl, url: 'http://cardgraph.internal/graphql' },
        { name: 'customers', sdl: broken, url: 'http://customers.internal/graphql' },
      ]),
    ).toThrow(/^composition failed:\nFIELD_TYPE_MISMATCH: .*"Card\.cardId"/);
  });

  it('composes under @apollo/composition too (what rover and GraphOS run), Card joined by cardId', async () => {
    const supergraph = await composeWithCustomers(
      'http://cardgraph.internal/graphql',
      'http://customers.internal/graphql',
      'apollo',
    );
    const lines = supergraph.split('\n').map((line) => line.trim());
    expect(lines).toContain(
      'CARDGRAPH @join__graph(name: "cardgraph", url: "http://cardgraph.internal/graphql")',
    );
    const header = (type: string) => lines.find((line) => line.startsWith(`type ${type}`));
    expect(header('Card')).toBe('type Card implements Node');
    expect(lines).toContain('@join__type(graph: CARDGRAPH, key: "cardId")');
    expect(lines).toContain('@join__type(graph: CUSTOMERS, key: "cardId", resolvable: false)');
    expect(lines).toContain('card: Card');
  });

  it('@apollo/composition fails on the same composition error', async () => {
    const broken = print(CUSTOMERS_TYPE_DEFS).replace('cardId: String!', 'cardId: Int!');
    const sdl = await cardgraphSubgraphSdl();
    expect(() =>
      composeSupergraphWithApollo([
        { name: 'cardgraph', sdl, url: 'http://cardgraph.internal/graphql' },
        { name: 'customers', sdl: broken, url: 'http://customers.internal/graphql' },
      ]),
    ).toThrow(/^composition failed:\nFIELD_TYPE_MISMATCH: .*"Card\.cardId"/);
  });
});
