import { type ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

/**
 * What replaces a suggestion in an error message (graphql-armor's mask, so answers read as before).
 */
export const SUGGESTION_MASK = '[Suggestion hidden]';

/**
 * A suggestion sentence of graphql-js (`didYouMean`) or graphql-jit: ` Did you mean "viewer"?`,
 * ` Did you mean the enum value "ENROLLED"?`, ` Did you mean to use an inline fragment on "T"?`.
 * Names in a schema never contain `?`, so the sentence ends at the first one.
 */
const SUGGESTION = /Did you mean [^?]*\?/g;

/**
 * `message` with every suggestion replaced by {@link SUGGESTION_MASK}; the same string when it has
 * none.
 */
export function withoutSuggestions(message: string): string {
  return message.includes('Did you mean ') ? message.replace(SUGGESTION, SUGGESTION_MASK) : message;
}

/** `error` with its message {@link withoutSuggestions}; the same error when it has no suggestion. */
function errorWithoutSuggestions<E extends GraphQLError | Error>(error: E): E {
  const message = withoutSuggestions(error.message);
  if (message === error.message) return error;
  if (!(error instanceof GraphQLError)) return new GraphQLError(message) as E;
  return new GraphQLError(message, {
    ...(error.nodes ? { nodes: error.nodes } : {}),
    ...(error.source ? { source: error.source } : {}),
    ...(error.positions ? { positions: error.positions } : {}),
    ...(error.path ? { path: error.path } : {}),
    // The redaction reads the reason from the original error (src/lib/redaction.ts).
    ...(error.originalError ? { originalError: errorWithoutSuggestions(error.originalError) } : {}),
    extensions: error.extensions,
  }) as E;
}

/** `result` with every error {@link errorWithoutSuggestions}; the same object when none changed. */
function resultWithoutSuggestions<R extends ExecutionResult>(result: R): R {
  if (!result.errors?.length) return result;
  const errors = result.errors.map(errorWithoutSuggestions);
  return errors.some((error, i) => error !== result.errors![i]) ? { ...result, errors } : result;
}

/**
 * `FIELD_SUGGESTIONS=off` (production's default): no error tells a client a name of the schema it
 * did not send (issue 20 item 9). graphql-js and graphql-jit suggest field, argument, type and enum
 * value names (`Did you mean the enum value "ENROLLED"?`), in validation (literals) and in variable
 * coercion at execution; every such sentence becomes {@link SUGGESTION_MASK}. The hooks sit on
 * validation, execution, subscription (each result of a stream) and the final HTTP result, so the
 * lean HTTP path, Yoga, graphql-sse and graphql-ws (all through the envelop) answer alike.
 * @param options.enabled suggestions stay (development, `FIELD_SUGGESTIONS=on`): no hooks.
 */
export function useFieldSuggestionSwitch<C extends object = object>(options: {
  enabled: boolean;
}): Plugin<C> {
  if (options.enabled) return {};
  return {
    onValidate() {
      return ({ valid, result, setResult }) => {
        if (!valid) setResult(result.map(errorWithoutSuggestions));
      };
    },
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) {
            return {
              onNext: ({ result: next, setResult: setNext }) => setNext(resultWithoutSuggestions(next)),
            };
          }
          setResult(resultWithoutSuggestions(result));
          return undefined;
        },
      };
    },
    onSubscribe() {
      return {
        onSubscribeResult({ result, setResult }) {
          if (isAsyncIterable(result)) {
            return {
              onNext: ({ result: next, setResult: setNext }) => setNext(resultWithoutSuggestions(next)),
            };
          }
          setResult(resultWithoutSuggestions(result));
          return undefined;
        },
      };
    },
    onExecutionResult({ result, setResult }) {
      if (result && !isAsyncIterable(result)) setResult(resultWithoutSuggestions(result));
    },
    onResultProcess({ result, setResult }) {
      if (isAsyncIterable(result)) return;
      if (Array.isArray(result))
        setResult(result.map((one) => resultWithoutSuggestions(one as ExecutionResult)));
      else setResult(resultWithoutSuggestions(result as ExecutionResult));
    },
  };
}
