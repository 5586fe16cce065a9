import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/lib/metrics.ts';
import { useCompiledExecution } from '../../src/plugins/compiled-execution.ts';
import { UpstreamCallBudget } from '../../src/upstream/budget.ts';

/**
 * src/plugins/compiled-execution.ts: queries run compiled (graphql-jit) once; a compiled run with
 * any error is answered by graphql-js instead, so error answers are graphql-js's, within the same
 * upstream call budget and counted; mutations always run on graphql-js.
 */
function server(compiled: boolean, budgetLimit = 100) {
  const calls = { card: 0, broken: 0, rename: 0 };
  const budgets: UpstreamCallBudget[] = [];
  const metrics = createMetrics();
  const schema = createSchema({
    typeDefs: /* GraphQL */ `
      type Card { id: ID!, name: String! }
      type Query { card(id: ID!): Card, broken: Card! }
      type Mutation { rename(name: String!): Card }
    `,
    resolvers: {
      Query: {
        // Each card read is one upstream call, charged to the operation's budget as the gateway's are.
        card: (_: unknown, { id }: { id: string }, context: { upstreamBudget: UpstreamCallBudget }) => {
          context.upstreamBudget.charge({ area: 'card-interface', method: 'GET', url: `/cards/${id}` });
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
  // The gateway context's upstream call budget (src/upstream/budget.ts), one per operation.
  const budget: Plugin<{ upstreamBudget?: UpstreamCallBudget }> = {
    onContextBuilding({ extendContext }) {
      const upstreamBudget = new UpstreamCallBudget(budgetLimit);
      budgets.push(upstreamBudget);
      extendContext({ upstreamBudget });
    },
  };
  const plugins = compiled ? [budget, useCompiledExecution({ metrics })] : [budget];
  const yoga = createYoga({ schema, plugins, logging: false });
  const run = async (query: string, variables?: Record<string, unknown>) => {
    const response = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.text() };
  };
  const fallbacks = async () =>
    (await metrics.jitFallbacks.get()).values.map(({ labels, value }) => [labels.operation, value]);
  return { run, calls, budgets, fallbacks };
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

  it('runs an error-free query once (compiled), and a query with an error again on graphql-js, counted', async () => {
    const { run, calls, fallbacks } = server(true);
    await run('query ($id: ID!) { card(id: $id) { id name } }', { id: 'c1' });
    await run('query ($id: ID!) { card(id: $id) { id name } }', { id: 'c2' });
    expect(calls).toEqual({ card: 2, broken: 0, rename: 0 });
    expect(await fallbacks()).toEqual([]);
    await run('query Broken { broken { id } }');
    expect(calls.broken).toBe(2);
    expect(await fallbacks()).toEqual([['other', 1]]);
    await run('mutation { rename(name: "Grace") { id } }');
    expect(calls.rename).toBe(1);
    expect(await fallbacks()).toEqual([['other', 1]]);
  });

  it('keeps the upstream call budget for the graphql-js run: never more calls than the budget', async () => {
    const { run, calls, budgets } = server(true, 3);
    const answer = await run('{ a: card(id: "c1") { id } b: card(id: "c2") { id } broken { id } }');
    // The compiled run spent 2 of 3; the second run has 1 left: `a` gets it, `b` is refused (and the
    // non-null `broken` nulls `data`). With a fresh budget it would have spent 4.
    expect(budgets.map((budget) => budget.used)).toEqual([3]);
    expect(calls.card).toBe(3);
    expect(JSON.parse(answer.body)).toMatchObject({
      data: null,
      errors: [{ path: ['b'] }, { path: ['broken'] }],
    });
  });
});
