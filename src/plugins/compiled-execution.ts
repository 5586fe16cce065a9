import {
  BREAK,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  getNamedType,
  getOperationAST,
  isScalarType,
  isSpecifiedScalarType,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { CompiledQuery } from 'graphql-jit';
import { isPromise, type Plugin } from 'graphql-yoga';
import { usesIncrementalDelivery } from '../lib/incremental-delivery.ts';
import type { Metrics } from '../lib/metrics.ts';

/**
 * Compiled execution (graphql-jit) of queries, on every transport that executes through envelop
 * (HTTP, SSE and graphql-ws): each (parsed document, operation name) is compiled once into a
 * function that resolves and completes the selection without graphql-js's per-request field
 * collection and type checks. Only the executor changes: every envelop hook (cost limit, metrics,
 * request ids, masking) runs as before.
 *
 * graphql-js stays the reference: a compiled run that answers with any error (variable coercion,
 * a resolver error, a null in a non-null position) is discarded and the operation runs again on
 * graphql-js, whose answer is sent, so errors keep graphql-js's messages, paths and masking. The
 * second run keeps the operation's upstream call budget (`UPSTREAM_CALL_BUDGET`): it is not reset,
 * so an erroring query never reaches the upstream more than its budget allows; per-request
 * DataLoaders serve it what the first run loaded, so it makes no new calls for the same keys. Each
 * such second run is counted: `cardgraph_jit_fallbacks_total{operation}`.
 *
 * Runs on graphql-js alone: mutations, subscriptions, documents graphql-jit cannot compile,
 * documents using `@defer` or `@stream` (graphql-jit would answer them whole, ignoring the
 * directives), and
 * documents with a variable inside a literal of a custom scalar (`_entities(representations:
 * [{__typename: "Card", cardId: $c}])`): graphql-js hands the scalar's `parseLiteral` the
 * variables, graphql-jit does not and the variable is lost. The compiled functions live as long as
 * their parsed document (a WeakMap over Yoga's parser cache, src/runtime/document-cache.ts).
 *
 * Register it before plugins that wrap the executor (tracing), so they wrap the compiled run and its
 * fallback. Measured with `npm run bench -- --queries-only` (interleaved A/B, docs/architecture.md "Design notes").
 * @param options.metrics where fallbacks are counted (none: not counted).
 */
export function useCompiledExecution(
  options: { metrics?: Pick<Metrics, 'jitFallbacks' | 'operationLabel'> } = {},
): Plugin {
  const { metrics } = options;
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();

  /** The compiled query (null: runs on graphql-js), or undefined until graphql-jit is loaded. */
  function compiledFor(args: ExecutionArgs, jit: GraphqlJit | undefined): CompiledQuery | null | undefined {
    let byName = compiled.get(args.document);
    if (!byName) {
      byName = new Map<string, CompiledQuery | null>();
      compiled.set(args.document, byName);
    }
    const key = args.operationName ?? '';
    let query = byName.get(key);
    if (query !== undefined) return query;
    if (
      getOperationAST(args.document, args.operationName)?.operation !== 'query' ||
      usesIncrementalDelivery(args.document) ||
      hasVariableInCustomScalarLiteral(args.schema, args.document)
    ) {
      byName.set(key, null);
      return null;
    }
    if (!jit) return undefined;
    const result = jit.compileQuery(args.schema, args.document, args.operationName ?? undefined);
    query = jit.isCompiledQuery(result) ? result : null;
    byName.set(key, query);
    return query;
  }

  function runCompiled(
    query: CompiledQuery,
    run: ExecutionArgs,
    executeFn: (run: ExecutionArgs) => unknown,
  ): unknown {
    const answer = (result: ExecutionResult) => {
      if (!result.errors?.length) return result;
      metrics?.jitFallbacks.inc({ operation: metrics.operationLabel(operationNameOf(run)) });
      return executeFn(run);
    };
    const result = query.query(run.rootValue, run.contextValue, run.variableValues ?? {});
    return isPromise(result) ? result.then(answer) : answer(result);
  }

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const query = compiledFor(args, loadedJit);
      if (query === null) return;
      if (query) {
        setExecuteFn((run) => runCompiled(query, run, executeFn) as never);
        return;
      }
      // The first compilable query of the process loads graphql-jit (not needed to start listening).
      setExecuteFn((async (run: ExecutionArgs) => {
        const loaded = compiledFor(args, await loadGraphqlJit());
        return loaded ? runCompiled(loaded, run, executeFn) : executeFn(run);
      }) as never);
    },
  };
}

/** graphql-jit's module, imported by the first query compiled (see {@link loadGraphqlJit}). */
type GraphqlJit = typeof import('graphql-jit');

let loadedJit: GraphqlJit | undefined;
let loadingJit: Promise<GraphqlJit> | undefined;

/**
 * graphql-jit (and the JSON schema compiler it loads, fast-json-stringify with ajv) imported on first
 * use rather than at start: about a tenth of the gateway's modules, none of them needed to listen.
 */
function loadGraphqlJit(): Promise<GraphqlJit> {
  loadingJit ??= import('graphql-jit').then((jit) => {
    loadedJit = jit;
    return jit;
  });
  return loadingJit;
}

/** The name of the operation a run executes (the one asked for, else the document's only one). */
function operationNameOf(run: { document: DocumentNode; operationName?: string | null }): string | null {
  return run.operationName ?? getOperationAST(run.document, run.operationName)?.name?.value ?? null;
}

/**
 * Whether `document` has a variable inside an object or list literal whose expected type is a
 * custom scalar (such as federation's `_Any`), which graphql-jit would not resolve.
 */
function hasVariableInCustomScalarLiteral(schema: GraphQLSchema, document: DocumentNode): boolean {
  const typeInfo = new TypeInfo(schema);
  let found = false;
  const check = (node: Parameters<typeof visit>[0]) => {
    const type = typeInfo.getInputType();
    const named = type ? getNamedType(type) : undefined;
    if (!named || !isScalarType(named) || isSpecifiedScalarType(named)) return undefined;
    visit(node, {
      Variable() {
        found = true;
        return BREAK;
      },
    });
    return found ? BREAK : false;
  };
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      ObjectValue: check,
      ListValue: check,
    }),
  );
  return found;
}
