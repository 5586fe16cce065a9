/**
 * An example "customers" subgraph (issue 22 item 2): a company's own service that stores each
 * customer's card by its cardgraph `cardId` and extends cardgraph's `Card` entity by that key, so
 * one query through the router goes from a customer to its card data. A graphql-yoga server on
 * `node:http` with a Federation v2 schema from @apollo/subgraph.
 *
 * Run: `npm run example:customers -- [port] [customers.json]` (port 4001 by default; the file
 * holds `[{ "id": "C1", "name": "Ada Lovelace", "cardId": "CRD…" }]`, empty without one).
 * Compose it with cardgraph's `_service { sdl }` (docs/supergraph.md).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';

/** A customer as this subgraph stores it: its card is a cardgraph card id (`CRD…`). */
export interface Customer {
  id: string;
  name: string;
  cardId: string | null;
}

/** The subgraph's SDL: `Card` is cardgraph's entity, referenced by key only (`resolvable: false`). */
export const CUSTOMERS_TYPE_DEFS = parse(/* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  "A customer of the company."
  type Customer @key(fields: "id") {
    id: ID!
    name: String!
    "The customer's card on file in cardgraph; null when none is stored."
    card: Card
  }

  "A card kept by cardgraph, referenced by its card id."
  type Card @key(fields: "cardId", resolvable: false) {
    cardId: String!
  }

  type Query {
    "Customers in storage order, at most \`first\` (default 50, at most 1,000)."
    customers(first: Int): [Customer!]!
    customer(id: ID!): Customer
  }
`);

/** The customers subgraph schema over `customers` (read as they are at each request). */
export function customersSchema(customers: readonly Customer[]) {
  const byId = (id: string) => customers.find((customer) => customer.id === id) ?? null;
  return buildSubgraphSchema([
    {
      typeDefs: CUSTOMERS_TYPE_DEFS,
      resolvers: {
        Query: {
          customers: (_root: unknown, args: { first?: number | null }) =>
            customers.slice(0, Math.min(Math.max(args.first ?? 50, 0), 1_000)),
          customer: (_root: unknown, args: { id: string }) => byId(args.id),
        },
        Customer: {
          __resolveReference: (reference: { id: string }) => byId(reference.id),
          card: (customer: Customer) => (customer.cardId ? { cardId: customer.cardId } : null),
        },
      },
    },
  ]);
}

/**
 * Starts the subgraph on `127.0.0.1:port` (0: a free port).
 * @returns its GraphQL endpoint (`http://127.0.0.1:<port>/graphql`) and the server, to close.
 */
export async function startCustomersSubgraph(
  customers: readonly Customer[],
  port = 0,
): Promise<{ url: string; server: Server }> {
  const yoga = createYoga({
    schema: customersSchema(customers),
    graphqlEndpoint: '/graphql',
    logging: false,
  });
  const server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, server };
}

if (import.meta.main) {
  const [port = '4001', file] = process.argv.slice(2);
  const customers = file ? (JSON.parse(readFileSync(file, 'utf8')) as Customer[]) : [];
  const { url } = await startCustomersSubgraph(customers, Number(port));
  console.log(`customers subgraph on ${url} (${customers.length} customers)`);
}
