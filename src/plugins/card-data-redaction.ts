import { type ExecutionResult, GraphQLError } from 'graphql';
import { type Plugin, usePayloadFormatter, type YogaInitialContext } from 'graphql-yoga';
import { redactPans } from '../lib/pan.ts';

/**
 * Last line of defence for card data in GraphQL errors. graphql-js echoes offending literals and
 * variable values in its parse, validation and coercion messages (e.g. `String cannot represent a
 * non string value: 4000…`); a client that puts a PAN in the wrong place must not see it reflected
 * or have it logged. Every error message passes through {@link redactPans} (BIN and last four).
 */
export function useCardDataRedaction(): Plugin {
  return {
    onPluginInit({ addPlugin }) {
      // usePayloadFormatter is typed for envelop's bare context; Yoga's context extends it.
      addPlugin(usePayloadFormatter((result) => redactResult(result)) as Plugin<YogaInitialContext>);
    },
    onParse() {
      return ({ result, replaceParseResult }) => {
        if (result instanceof Error) replaceParseResult(redactError(result));
      };
    },
    onValidate() {
      return ({ result, setResult }) => {
        if (result.length > 0) setResult(result.map(redactError));
      };
    },
  };
}

function redactResult(result: ExecutionResult): ExecutionResult | false {
  if (!result.errors?.length) return false;
  return { ...result, errors: result.errors.map(redactError) };
}

function redactError<E extends Error>(error: E): E | GraphQLError {
  const message = redactPans(error.message);
  if (message === error.message) return error;
  if (error instanceof GraphQLError) {
    return new GraphQLError(message, {
      ...(error.nodes ? { nodes: error.nodes } : {}),
      ...(error.path ? { path: error.path } : {}),
      extensions: error.extensions,
    });
  }
  return new GraphQLError(message);
}
