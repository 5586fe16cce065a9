import { performance } from 'node:perf_hooks';
import { type GraphQLError, Kind, parse } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { exampleOperationNames } from '../client/example-operations.ts';
import type { Config } from '../config/index.ts';
import { errorsOfPart } from '../lib/incremental-delivery.ts';
import type { Metrics } from '../lib/metrics.ts';
import { errorCodeOf, operationOf, requestedOperationName, requestRecordOf } from '../lib/request-record.ts';
import { INTERNAL_ERROR_CODE } from '../lib/transport-errors.ts';
import { loadTrustedDocuments } from './persisted-operations.ts';

/**
 * The operation names that may be metric labels (issue 20 item 5): those of the example operations
 * (src/client/operations.graphql) and of the trusted-documents manifest
 * (`PERSISTED_OPERATIONS_MANIFEST`), i.e. names the operator shipped, never one a client makes up.
 * A manifest that cannot be read or a document that does not parse adds nothing here (the
 * persisted-operations plugin reports a bad manifest at start).
 */
export function trustedOperationNames(
  settings: Pick<Config['persistedOperations'], 'mode' | 'manifestPath'>,
): string[] {
  const names = new Set(exampleOperationNames());
  let documents: Iterable<string> = [];
  try {
    documents = loadTrustedDocuments(settings).values();
  } catch {
    // Refused at start by the runtime, with its ConfigError.
  }
  for (const document of documents) {
    try {
      for (const definition of parse(document).definitions) {
        if (definition.kind === Kind.OPERATION_DEFINITION && definition.name)
          names.add(definition.name.value);
      }
    } catch {
      // Not a document: no name.
    }
  }
  return [...names];
}

/**
 * Prometheus metrics of GraphQL operations on every transport (HTTP, SSE, graphql-ws):
 * `cardgraph_graphql_operations_total` and `cardgraph_graphql_operation_duration_seconds` by bounded
 * operation name, type and outcome (`success`, `error`: any error in the result, parse and
 * validation failures included), `cardgraph_graphql_errors_total` by operation and code, and
 * `cardgraph_graphql_live_subscriptions` by transport (`graphql-ws`, `sse`).
 * Durations run from parsing to the result (for subscriptions: to the source stream; for incremental
 * `@defer`/`@stream` answers: to their last part, whose outcome counts the errors of every part).
 */
export function useOperationMetrics(metrics: Metrics): Plugin {
  const startedAt = new WeakMap<object, number>();

  function finish(
    context: object,
    name: string | null,
    type: string,
    errors: readonly (GraphQLError | Error)[] | undefined,
    fallbackCode = INTERNAL_ERROR_CODE,
  ): void {
    const operation = metrics.operationLabel(name);
    const outcome = errors?.length ? 'error' : 'success';
    const labels = { operation, type, outcome };
    metrics.operations.inc(labels);
    const started = startedAt.get(context);
    metrics.operationDuration.observe(
      labels,
      started === undefined ? 0 : (performance.now() - started) / 1000,
    );
    countErrors(operation, errors, fallbackCode);
  }

  function countErrors(
    operation: string,
    errors: readonly (GraphQLError | Error)[] | undefined,
    fallbackCode = INTERNAL_ERROR_CODE,
  ): void {
    for (const error of errors ?? []) {
      metrics.graphqlErrors.inc({
        operation,
        code: metrics.errorCodeLabel(errorCodeOf(error, fallbackCode)),
      });
    }
  }

  return {
    onParse({ context }) {
      startedAt.set(context, performance.now());
      return ({ result }) => {
        if (result instanceof Error) {
          finish(context, requestedOperationName(context), 'unknown', [result], 'GRAPHQL_PARSE_FAILED');
        }
      };
    },
    onValidate({ context, params }) {
      return ({ result }) => {
        if (result.length === 0) return;
        const { name, type } = operationOf(params.documentAST, requestedOperationName(context));
        finish(context, name, type, result, 'GRAPHQL_VALIDATION_FAILED');
      };
    },
    onExecute({ args }) {
      return {
        onExecuteDone({ result }) {
          const { name, type } = operationOf(args.document, args.operationName);
          if (!isAsyncIterable(result)) {
            finish(args.contextValue, name, type, result.errors);
            return undefined;
          }
          // Incremental delivery (@defer/@stream): one operation, counted when its last part is out,
          // with the errors of every part and the duration up to that part.
          const errors: GraphQLError[] = [];
          let ended = false;
          return {
            onNext({ result: part }) {
              errors.push(...errorsOfPart(part));
            },
            onEnd() {
              if (ended) return;
              ended = true;
              finish(args.contextValue, name, type, errors);
            },
          };
        },
      };
    },
    onSubscribe({ args }) {
      const { name, type } = operationOf(args.document, args.operationName);
      const transport = requestRecordOf(args.contextValue)?.transport === 'graphql-ws' ? 'graphql-ws' : 'sse';
      return {
        onSubscribeError({ error }) {
          finish(args.contextValue, name, type, [error as Error]);
        },
        onSubscribeResult({ result }) {
          if (!isAsyncIterable(result)) {
            finish(args.contextValue, name, type, result.errors);
            return undefined;
          }
          finish(args.contextValue, name, type, undefined);
          metrics.liveSubscriptions.inc({ transport });
          const operation = metrics.operationLabel(name);
          let ended = false;
          return {
            onNext({ result: event }) {
              countErrors(operation, event.errors);
            },
            onEnd() {
              if (ended) return;
              ended = true;
              metrics.liveSubscriptions.dec({ transport });
            },
          };
        },
      };
    },
  };
}
