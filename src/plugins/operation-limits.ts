import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { GraphQLError, ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Config } from '../config/index.ts';
import type { GraphQLContext } from '../context.ts';
import { useFieldSuggestionSwitch } from './field-suggestions.ts';
import { useOperationCost } from './operation-cost.ts';

/**
 * How graphql-armor's validation rules (depth, aliases, directives) refuse: the error is reported as
 * a validation error, so it carries `GRAPHQL_VALIDATION_FAILED` and passes through the validation
 * hooks (metrics, access lines, tracing) on every transport. Armor's default throws it out of
 * validation instead: an error without a code that skipped those hooks, and that graphql-sse, which
 * reads an uncoded refusal as one of its own, answered as `BAD_REQUEST`.
 */
const reportedAsValidationError = {
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(error)],
};

/**
 * What one operation may ask of the gateway, on every transport: graphql-armor bounds the shape of
 * the document (depth 12, aliases 15, directives 20, tokens 3,000), suggestions of schema names only
 * when `fieldSuggestions` (src/plugins/field-suggestions.ts), and {@link useOperationCost} bounds what it may ask of the upstream (cost with
 * variables and list sizes, the per-operation upstream call budget). Armor's own cost limit is off:
 * it runs before variables exist (`first: $n` counted as 1) and does not know our page sizes.
 */
export function useOperationLimits(options: {
  limits: Config['operationLimits'];
  fieldSuggestions: boolean;
}): Plugin<GraphQLContext> {
  return {
    onPluginInit({ addPlugin }) {
      // Added right after this plugin, in this order.
      addPlugin(
        EnvelopArmorPlugin({
          maxDepth: { n: 12, ...reportedAsValidationError },
          maxAliases: { n: 15, ...reportedAsValidationError },
          maxDirectives: { n: 20, ...reportedAsValidationError },
          maxTokens: { n: 3_000 },
          costLimit: { enabled: false },
          // Armor's mask misses enum value suggestions (`Did you mean the enum value …?`) and
          // variable coercion errors: useFieldSuggestionSwitch masks them all (issue 20 item 9).
          blockFieldSuggestion: { enabled: false },
        }),
      );
      addPlugin(useFieldSuggestionSwitch({ enabled: options.fieldSuggestions }));
      addPlugin(useOperationCost(options.limits));
    },
  };
}
