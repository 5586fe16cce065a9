import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { isPromise, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../context.ts';
import { usesIncrementalDelivery } from '../lib/incremental-delivery.ts';

/**
 * Compiled execution (graphql-jit) of queries, on every transport that executes through envelop
 * (HTTP, SSE and graphql-ws): each (parsed document, operation name) is compiled once into a
 * function that resolves and completes the selection without graphql-js's per-request field
 * collection and type checks. Only the executor changes: every envelop hook (cost limit, metrics,
 * request ids, masking) runs as before.
 *
 * graphql-js stays the reference: a compiled run that answers with any error (variable coercion,
 * a resolver error, a null in a non-null position) is discarded and the operation runs again on
 * graphql-js, whose answer is sent, so errors keep graphql-js's messages, paths and masking. Queries
 * only read (per-request DataLoaders serve the second run what the first one loaded, so it makes no
 * new upstream calls for the same keys); the context's upstream call budget starts afresh for the
 * second run, so its answer is the one graphql-js alone gives (an erroring query may thus reach the
 * upstream up to twice its budget). Mutations, subscriptions, documents using `@defer` or `@stream`
 * (graphql-jit would answer them whole, ignoring the directives) and documents graphql-jit cannot
 * compile always run on graphql-js. The compiled functions live as long as their parsed document (a
 * WeakMap over Yoga's parser cache, src/runtime/document-cache.ts).
 *
 * Register it before plugins that wrap the executor (tracing), so they wrap the compiled run and its
 * fallback. Measured with `npm run bench -- --queries-only` (interleaved A/B, README "Design notes").
 */
export function useCompiledExecution(): Plugin {
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();

  function compiledFor(args: {
    schema: Parameters<typeof compileQuery>[0];
    document: DocumentNode;
    operationName?: string | null | undefined;
  }): CompiledQuery | null {
    const byName = compiled.get(args.document) ?? new Map<string, CompiledQuery | null>();
    compiled.set(args.document, byName);
    const key = args.operationName ?? '';
    let query = byName.get(key);
    if (query === undefined) {
      query = null;
      if (
        getOperationAST(args.document, args.operationName)?.operation === 'query' &&
        !usesIncrementalDelivery(args.document)
      ) {
        const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
        if (isCompiledQuery(result)) query = result;
      }
      byName.set(key, query);
    }
    return query;
  }

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const query = compiledFor(args);
      if (!query) return;
      setExecuteFn((run) => {
        const answer = (result: ExecutionResult) => {
          if (!result.errors?.length) return result;
          (run.contextValue as Partial<GraphQLContext>).upstreamBudget?.reset();
          return executeFn(run);
        };
        const result = query.query(run.rootValue, run.contextValue, run.variableValues ?? {});
        return (isPromise(result) ? result.then(answer) : answer(result)) as never;
      });
    },
  };
}
