import { InputValidationError } from '@pothos/plugin-validation';
import { GraphQLError } from 'graphql';
import { maskError, type YogaMaskedErrorOpts } from 'graphql-yoga';
import { GatewayError } from '../errors.ts';
import { INTERNAL_ERROR_CODE, INTERNAL_ERROR_MESSAGE } from '../lib/transport-errors.ts';

/**
 * Error masking of every transport, for Yoga's `maskedErrors` option (Yoga installs envelop's
 * masking plugin from it and also masks its own HTTP errors with it, which a plugin in the list
 * would not). Typed gateway errors (src/errors.ts) and input validation errors that escape a result
 * union (e.g. a refused subscription) keep their message and `code` (`invalid-input` for input
 * validation); anything else is masked as Yoga does by default, as the transports' one internal
 * error: `Unexpected error.`, code `internal-error` (src/lib/transport-errors.ts; Yoga's own code
 * for it, `INTERNAL_SERVER_ERROR`, is not answered), its `http` extension and, in development, the
 * original error kept.
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
      const masked = maskError(error, message, isDev);
      if (masked === error || !(masked instanceof GraphQLError)) return masked;
      return new GraphQLError(INTERNAL_ERROR_MESSAGE, {
        ...(masked.nodes ? { nodes: masked.nodes } : {}),
        ...(masked.source ? { source: masked.source } : {}),
        ...(masked.positions ? { positions: masked.positions } : {}),
        ...(masked.path ? { path: masked.path } : {}),
        extensions: { ...masked.extensions, code: INTERNAL_ERROR_CODE },
      });
    },
  };
}
