import { InputValidationError } from '@pothos/plugin-validation';
import { GraphQLError } from 'graphql';
import { maskError, type YogaMaskedErrorOpts } from 'graphql-yoga';
import { GatewayError } from '../errors.ts';

/**
 * Error masking of every transport, for Yoga's `maskedErrors` option (Yoga installs envelop's
 * masking plugin from it and also masks its own HTTP errors with it, which a plugin in the list
 * would not). Typed gateway errors (src/errors.ts) and input validation errors that escape a result
 * union (e.g. a refused subscription) keep their message and `code` (`invalid-input` for input
 * validation); anything else is masked as Yoga does by default (`Unexpected error.`).
 */
export function useErrorMasking(): Partial<YogaMaskedErrorOpts> {
  return {
    maskError: (error, message, isDev) => {
      const original = error instanceof GraphQLError ? error.originalError : undefined;
      if (
        error instanceof GraphQLError &&
        (original instanceof GatewayError || original instanceof InputValidationError)
      ) {
        return new GraphQLError(error.message, {
          ...(error.nodes ? { nodes: error.nodes } : {}),
          ...(error.path ? { path: error.path } : {}),
          extensions: {
            ...error.extensions,
            code: original instanceof GatewayError ? original.code : 'invalid-input',
          },
        });
      }
      return maskError(error, message, isDev);
    },
  };
}
