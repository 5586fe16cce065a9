import type { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { errorCodeOf, operationOf, requestedOperationName, requestRecordOf } from '../lib/request-record.ts';
import { INTERNAL_ERROR_CODE } from '../lib/transport-errors.ts';

/**
 * Fills the access line of a request (src/lib/request-record.ts, written by src/server/http.ts when the
 * request ends) with what only GraphQL knows: the operation name and the error codes of its results,
 * parse and validation failures included. Never the document or the variables.
 */
export function useAccessLogDetails(): Plugin {
  const note = (
    context: unknown,
    name: string | null,
    errors?: readonly (GraphQLError | Error)[],
    fallback = INTERNAL_ERROR_CODE,
  ) => {
    const record = requestRecordOf(context);
    if (!record) return;
    if (name) record.operationNames.add(name);
    for (const error of errors ?? []) record.errorCodes.add(errorCodeOf(error, fallback));
  };
  return {
    onParse({ context }) {
      return ({ result }) => {
        if (result instanceof Error)
          note(context, requestedOperationName(context), [result], 'GRAPHQL_PARSE_FAILED');
      };
    },
    onValidate({ context, params }) {
      return ({ result }) => {
        const { name } = operationOf(params.documentAST, requestedOperationName(context));
        note(context, name, result, 'GRAPHQL_VALIDATION_FAILED');
      };
    },
    onExecute({ args }) {
      return {
        onExecuteDone({ result }) {
          note(args.contextValue, null, isAsyncIterable(result) ? undefined : result.errors);
        },
      };
    },
    onSubscribe({ args }) {
      return {
        onSubscribeResult({ result }) {
          if (isAsyncIterable(result)) {
            return { onNext: ({ result: event }) => note(args.contextValue, null, event.errors) };
          }
          note(args.contextValue, null, result.errors);
          return undefined;
        },
      };
    },
  };
}
