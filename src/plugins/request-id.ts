import { type ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { requestRecordOf } from '../lib/request-record.ts';

/**
 * Puts the request id (`x-request-id`, see src/lib/request-record.ts) into the `extensions.requestId`
 * of every GraphQL error a client receives (HTTP, SSE and graphql-ws alike, masked errors included),
 * so a client's bug report leads to the access line and the trace of its request.
 */
export function useRequestId(): Plugin {
  return {
    // The hooks go at the very end of the plugin list (envelop initialises plugins appended during
    // init), after Yoga's error masking: a masked error is a new error without our extension.
    // `addPlugin` would insert them right after this plugin, before the masking.
    onPluginInit({ plugins }) {
      plugins.push(requestIdHooks());
    },
  };
}

function requestIdHooks(): Plugin {
  return {
    onExecute({ args }) {
      const id = requestRecordOf(args.contextValue)?.id;
      if (!id) return undefined;
      return {
        onExecuteDone({ result, setResult }) {
          if (!isAsyncIterable(result)) setResult(withRequestId(result, id));
        },
      };
    },
    onSubscribe({ args }) {
      const id = requestRecordOf(args.contextValue)?.id;
      if (!id) return undefined;
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) {
            setResult(withRequestId(result, id));
            return undefined;
          }
          return { onNext: ({ result: event, setResult: setEvent }) => setEvent(withRequestId(event, id)) };
        },
      };
    },
    // Parse and validation errors never reach execute: every road through Yoga's `getResultForParams`.
    onExecutionResult({ result, setResult, context }) {
      if (result && !isAsyncIterable(result)) setResult(stampRequestId(result, context) as never);
    },
    // Yoga's own HTTP handling: also the errors that never became a result (a body Yoga's parser refused).
    onResultProcess({ result, setResult, serverContext }) {
      if (!isAsyncIterable(result)) setResult(stampRequestId(result, serverContext));
    },
  };
}

/**
 * A request's result (one, or a batch's) with the request id of `context` (its `requestRecord`) on
 * every error, as {@link useRequestId} puts it; unchanged when the context has no record. For a
 * transport's errors that never reached Yoga's `getResultForParams` (src/server/graphql-http.ts).
 */
export function stampRequestId<R extends ExecutionResult | readonly ExecutionResult[]>(
  result: R,
  context: unknown,
): R {
  const id = requestRecordOf(context)?.id;
  if (!id) return result;
  if (Array.isArray(result)) return result.map((one: ExecutionResult) => withRequestId(one, id)) as never;
  return withRequestId(result as ExecutionResult, id) as R;
}

/** `result` with `extensions.requestId` on each of its errors (the same object when it has none). */
export function withRequestId<R extends ExecutionResult>(result: R, id: string): R {
  if (!result.errors?.length || result.errors.every((error) => error.extensions?.requestId === id))
    return result;
  return {
    ...result,
    errors: result.errors.map((error) =>
      error.extensions?.requestId === id
        ? error
        : new GraphQLError(error.message, {
            ...(error.nodes ? { nodes: error.nodes } : {}),
            ...(error.source ? { source: error.source } : {}),
            ...(error.positions ? { positions: error.positions } : {}),
            ...(error.path ? { path: error.path } : {}),
            ...(error.originalError ? { originalError: error.originalError } : {}),
            extensions: { ...error.extensions, requestId: id },
          }),
    ),
  };
}
