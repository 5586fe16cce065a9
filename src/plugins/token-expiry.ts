import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { tokenExpiredError, untilTokenExpiry } from '../auth/token-expiry.ts';
import type { GraphQLContext } from '../context.ts';

/**
 * Token lifetime on HTTP streams: a subscription over SSE (or multipart, or any transport that
 * executes through Yoga with an HTTP request) ends at the client token's `exp` with one last result
 * carrying a `token-expired` error, and its source stops at that moment (no more events, no more
 * upstream reads). graphql-ws enforces the same instant by closing its socket with 4403
 * (src/server/graphql-ws.ts); its operations carry no `request` in their context and are left to that close.
 * Live subscriptions are the live-subscription hub's (src/live/hub.ts): their shared execution has no
 * `request` either, and the hub ends each member at its own token's `exp`; this covers the rest
 * (resuming subscriptions, incremental delivery).
 */
export function useTokenExpiry(): Plugin<GraphQLContext> {
  const limit = (
    context: GraphQLContext & { request?: unknown },
    result: unknown,
    setResult: (result: AsyncIterable<ExecutionResult>) => void,
  ) => {
    const viewer = context.viewer;
    if (!viewer || !context.request || !isAsyncIterable(result)) return;
    setResult(
      untilTokenExpiry(result as AsyncIterable<ExecutionResult>, viewer.expiresAt, () => ({
        errors: [tokenExpiredError()],
      })),
    );
  };
  return {
    onSubscribe({ args }) {
      return {
        onSubscribeResult({ result, setResult }) {
          limit(args.contextValue, result, setResult as (r: AsyncIterable<ExecutionResult>) => void);
        },
      };
    },
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          limit(args.contextValue, result, setResult as (r: AsyncIterable<ExecutionResult>) => void);
        },
      };
    },
  };
}
