import {
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
  GraphQLError,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../context.ts';

/**
 * Subscription events executed once per (event, operation), not once per subscriber (issue 13
 * "Fan-out"). Every subscriber of the same document, operation name, variables, vaults and scopes
 * receives the same `ExecutionResult` object for an event the bus handed to all of them (the same
 * event instance), so 10,000 subscribers of one vault cost one execution per event.
 *
 * Results are memoized in a `WeakMap` keyed by the event object: they live as long as the event
 * does. Events that are not shared (replayed from the log for one resuming subscriber) are executed
 * for that subscriber alone, as before. Everything else is graphql-js `subscribe` semantics: the
 * source stream comes from `createSourceEventStream`, its errors are returned as they are, and the
 * source is closed when the subscriber's iterator is.
 */
export function useSharedSubscriptionResults(): Plugin<GraphQLContext> {
  const results = new WeakMap<object, Map<string, ExecutionResult | Promise<ExecutionResult>>>();
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 1;

  /** What makes two subscribers' results identical: the operation and what the viewer may see. */
  function operationKey(args: ExecutionArgs): string {
    let documentId = documentIds.get(args.document);
    if (documentId === undefined) {
      documentId = nextDocumentId++;
      documentIds.set(args.document, documentId);
    }
    const viewer = (args.contextValue as GraphQLContext | undefined)?.viewer;
    const scopes = viewer ? [...viewer.scopes].sort().join(' ') : '';
    const vaults = viewer ? [...viewer.vaults].sort().join(',') : '';
    return `${documentId}\u0000${args.operationName ?? ''}\u0000${JSON.stringify(args.variableValues ?? {})}\u0000${vaults}\u0000${scopes}`;
  }

  function resultFor(
    event: unknown,
    key: string,
    args: ExecutionArgs,
  ): ExecutionResult | Promise<ExecutionResult> {
    if (typeof event !== 'object' || event === null) return execute({ ...args, rootValue: event });
    let byOperation = results.get(event);
    if (!byOperation) {
      byOperation = new Map();
      results.set(event, byOperation);
    }
    let result = byOperation.get(key);
    if (!result) {
      result = execute({ ...args, rootValue: event });
      byOperation.set(key, result);
    }
    return result;
  }

  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(async (args: ExecutionArgs) => {
        const source = await createSourceEventStream(args);
        if (!isAsyncIterable(source)) return source;
        const key = operationKey(args);
        const iterator = source[Symbol.asyncIterator]();
        const mapped: AsyncIterableIterator<ExecutionResult> = {
          async next() {
            const step = await iterator.next();
            if (step.done) return { value: undefined, done: true };
            try {
              return { value: await resultFor(step.value, key, args), done: false };
            } catch (error) {
              return { value: { errors: [toGraphQLError(error)] }, done: false };
            }
          },
          async return() {
            await iterator.return?.();
            return { value: undefined, done: true };
          },
          async throw(error?: unknown) {
            await iterator.return?.();
            throw error;
          },
          [Symbol.asyncIterator]() {
            return mapped;
          },
        };
        return mapped;
      });
    },
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

function toGraphQLError(error: unknown): GraphQLError {
  return error instanceof GraphQLError
    ? error
    : new GraphQLError('Unexpected error', { originalError: error as Error });
}
