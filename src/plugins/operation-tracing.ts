import type { Span, Tracer } from '@opentelemetry/api';
import type { ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { context, SpanKind, SpanStatusCode, trace } from '../lib/otel-api.ts';
import { errorCodeOf, operationOf, requestedOperationName, requestRecordOf } from '../lib/request-record.ts';
import { recordSpanFailure } from '../lib/tracing.ts';
import { INTERNAL_ERROR_CODE } from '../lib/transport-errors.ts';

/**
 * One OpenTelemetry span per GraphQL operation (`<type> <name>`, e.g. `query CardById`), from parsing
 * to its result (subscriptions: to the source stream), child of the active span (the HTTP request
 * span, itself a child of an incoming `traceparent`). Execution runs inside the span's context, so
 * upstream calls (src/upstream/http.ts) become its children. Attributes: `graphql.operation.type`,
 * `graphql.operation.name` (bounded by `operationLabel`), `cardgraph.request_id` and the error codes;
 * never the document or variables.
 */
export function useOperationTracing(tracer: Tracer, operationLabel: (name: string | null) => string): Plugin {
  const spans = new WeakMap<object, Span>();

  function end(
    span: Span,
    errors: readonly (GraphQLError | Error)[] | undefined,
    fallbackCode: string,
  ): void {
    if (errors?.length) {
      const codes = [...new Set(errors.map((error) => errorCodeOf(error, fallbackCode)))];
      span.setAttribute('cardgraph.error_codes', codes);
      recordSpanFailure(span, codes[0]!);
    } else {
      span.setStatus({ code: SpanStatusCode.OK });
    }
    span.end();
  }

  function name(span: Span, type: string, operation: string | null): void {
    const label = operationLabel(operation);
    span.updateName(`${type} ${label}`);
    span.setAttribute('graphql.operation.type', type);
    span.setAttribute('graphql.operation.name', label);
  }

  /**
   * The span of the operation of `graphqlContext`, with its execute or subscribe function (`run`)
   * replaced through `setRun` by one that runs inside the span; undefined (nothing replaced) when the
   * operation has no span.
   */
  function runInSpan<Args, Result>(
    graphqlContext: object,
    run: (args: Args) => Result,
    setRun: (run: (args: Args) => Result) => void,
  ): Span | undefined {
    const span = spans.get(graphqlContext);
    if (span) setRun((args) => within(span, () => run(args)));
    return span;
  }

  return {
    onParse({ context: graphqlContext }) {
      const requestId = requestRecordOf(graphqlContext)?.id;
      const span = tracer.startSpan('graphql operation', {
        kind: SpanKind.INTERNAL,
        ...(requestId ? { attributes: { 'cardgraph.request_id': requestId } } : {}),
      });
      spans.set(graphqlContext, span);
      return ({ result }) => {
        if (result instanceof Error) {
          name(span, 'unknown', null);
          end(span, [result], 'GRAPHQL_PARSE_FAILED');
        }
      };
    },
    onValidate({ context: graphqlContext, params }) {
      return ({ result }) => {
        const span = spans.get(graphqlContext);
        if (!span) return;
        const operation = operationOf(params.documentAST, requestedOperationName(graphqlContext));
        name(span, operation.type, operation.name);
        if (result.length > 0) end(span, result, 'GRAPHQL_VALIDATION_FAILED');
      };
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const span = runInSpan(args.contextValue, executeFn, setExecuteFn);
      if (!span) return undefined;
      return { onExecuteDone: ({ result }) => endWithResult(span, result) };
    },
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const span = runInSpan(args.contextValue, subscribeFn, setSubscribeFn);
      if (!span) return undefined;
      return {
        onSubscribeError: ({ error }) => end(span, [error as Error], INTERNAL_ERROR_CODE),
        onSubscribeResult: ({ result }) => void endWithResult(span, result),
      };
    },
  };

  /** Ends the span with the errors of a single result (a stream ends it without). */
  function endWithResult(span: Span, result: ExecutionResult | AsyncIterable<unknown>): void {
    end(span, isAsyncIterable(result) ? undefined : result.errors, INTERNAL_ERROR_CODE);
  }
}

/** Runs `run` with `span` active, so the upstream calls it makes become the span's children. */
function within<T>(span: Span, run: () => T): T {
  return context.with(trace.setSpan(context.active(), span), run);
}
