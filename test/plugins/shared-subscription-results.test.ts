import type { ExecutionResult } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useSharedSubscriptionResults } from '../../src/plugins/shared-subscription-results.ts';

/**
 * One execution per event per (operation, variables, viewer), shared by every subscriber of it
 * (issue 13 "Fan-out"), through Yoga's enveloped subscribe as graphql-ws and SSE use it.
 */
describe('useSharedSubscriptionResults', () => {
  it('executes an event once for all subscribers of the same operation, once more per other variables', async () => {
    const listeners = new Set<(event: { n: number }) => void>();
    let labelCalls = 0;
    const schema = createSchema({
      typeDefs: /* GraphQL */ `
        type Query { ok: Boolean }
        type Event { n: Int!, label(prefix: String!): String! }
        type Subscription { events: Event! }
      `,
      resolvers: {
        Event: {
          label: (event: { n: number }, args: { prefix: string }) => {
            labelCalls++;
            return `${args.prefix}${event.n}`;
          },
        },
        Subscription: {
          events: {
            subscribe: () => {
              const queue: { n: number }[] = [];
              let wake: (() => void) | undefined;
              const listener = (event: { n: number }) => {
                queue.push(event);
                wake?.();
              };
              listeners.add(listener);
              return {
                async next() {
                  while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
                  return { value: queue.shift()!, done: false };
                },
                async return() {
                  listeners.delete(listener);
                  return { value: undefined, done: true };
                },
                [Symbol.asyncIterator]() {
                  return this;
                },
              };
            },
            resolve: (event: { n: number }) => event,
          },
        },
      },
    });
    const yoga = createYoga({ schema, plugins: [useSharedSubscriptionResults()] });
    const query = 'subscription S($p: String!) { events { n label(prefix: $p) } }';
    const subscribe = async (prefix: string) => {
      const { parse, subscribe, contextFactory } = yoga.getEnveloped({} as never);
      const result = await subscribe({
        schema: yoga.getEnveloped({} as never).schema,
        document: parse(query),
        variableValues: { p: prefix },
        contextValue: await contextFactory(),
      });
      return result as AsyncIterableIterator<ExecutionResult>;
    };
    const same = await Promise.all([subscribe('a'), subscribe('a'), subscribe('a')]);
    const other = await subscribe('b');
    expect(listeners.size).toBe(4);

    const event = { n: 7 };
    for (const listener of listeners) listener(event);
    const results = await Promise.all([...same, other].map((iterator) => iterator.next()));
    expect(results.map((r) => r.value)).toEqual([
      { data: { events: { n: 7, label: 'a7' } } },
      { data: { events: { n: 7, label: 'a7' } } },
      { data: { events: { n: 7, label: 'a7' } } },
      { data: { events: { n: 7, label: 'b7' } } },
    ]);
    expect(results[1]!.value).toBe(results[0]!.value);
    expect(results[2]!.value).toBe(results[0]!.value);
    expect(labelCalls).toBe(2);

    // A different event object is executed afresh.
    const next = { n: 8 };
    for (const listener of listeners) listener(next);
    const second = await Promise.all(same.map((iterator) => iterator.next()));
    expect(second.map((r) => r.value)).toEqual(Array(3).fill({ data: { events: { n: 8, label: 'a8' } } }));
    expect(labelCalls).toBe(3);

    // Closing a subscriber closes its source.
    await same[0]!.return?.();
    expect(listeners.size).toBe(3);
  });
});
