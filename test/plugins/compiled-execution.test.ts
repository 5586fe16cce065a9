import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useCompiledExecution } from '../../src/plugins/compiled-execution.ts';

/**
 * src/plugins/compiled-execution.ts: queries run compiled (graphql-jit) once; a compiled run with
 * any error is answered by graphql-js instead, so error answers are graphql-js's; mutations always
 * run on graphql-js.
 */
function server(compiled: boolean) {
  const calls = { card: 0, broken: 0, rename: 0, budgetResets: 0 };
  const schema = createSchema({
    typeDefs: /* GraphQL */ `
      type Card { id: ID!, name: String! }
      type Query { card(id: ID!): Card, broken: Card! }
      type Mutation { rename(name: String!): Card }
    `,
    resolvers: {
      Query: {
        card: (_: unknown, { id }: { id: string }) => {
          calls.card++;
          return { id, name: 'Ada' };
        },
        broken: () => {
          calls.broken++;
          throw new Error('upstream said no');
        },
      },
      Mutation: {
        rename: (_: unknown, { name }: { name: string }) => {
          calls.rename++;
          return { id: 'c1', name };
        },
      },
    },
  });
  // The gateway context's upstream call budget (src/upstream/budget.ts), reset before a fallback run.
  const budget: Plugin<{ upstreamBudget?: { reset(): void } }> = {
    onContextBuilding({ extendContext }) {
      extendContext({ upstreamBudget: { reset: () => calls.budgetResets++ } });
    },
  };
  const plugins = compiled ? [budget, useCompiledExecution()] : [budget];
  const yoga = createYoga({ schema, plugins, logging: false });
  const run = async (query: string, variables?: Record<string, unknown>) => {
    const response = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.text() };
  };
  return { run, calls };
}

describe('compiled execution', () => {
  const cases: [string, Record<string, unknown>?][] = [
    ['query ($id: ID!) { card(id: $id) { id name } }', { id: 'c1' }],
    ['query ($id: ID!) { card(id: $id) { id name } }', { id: { not: 'an id' } }],
    ['{ broken { id } }'],
    ['{ card(id: "c1") { id } broken { name } }'],
    ['mutation { rename(name: "Grace") { id name } }'],
  ];

  it('answers every case exactly as graphql-js does', async () => {
    const compiled = server(true);
    const reference = server(false);
    for (const [query, variables] of cases) {
      expect({ query, ...(await compiled.run(query, variables)) }).toEqual({
        query,
        ...(await reference.run(query, variables)),
      });
    }
  });

  it('runs an error-free query once (compiled), and a query with an error again on graphql-js with a fresh upstream budget', async () => {
    const { run, calls } = server(true);
    await run('query ($id: ID!) { card(id: $id) { id name } }', { id: 'c1' });
    await run('query ($id: ID!) { card(id: $id) { id name } }', { id: 'c2' });
    expect(calls).toEqual({ card: 2, broken: 0, rename: 0, budgetResets: 0 });
    await run('{ broken { id } }');
    expect(calls.broken).toBe(2);
    expect(calls.budgetResets).toBe(1);
    await run('mutation { rename(name: "Grace") { id } }');
    expect(calls.rename).toBe(1);
  });
});
