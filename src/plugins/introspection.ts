import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * `INTROSPECTION=off`: rejects `__schema` and `__type` at validation (graphql-js's
 * `NoSchemaIntrospectionCustomRule`, a GRAPHQL_VALIDATION_FAILED error). It hooks validation itself
 * rather than the HTTP request, so HTTP, SSE and graphql-ws (which validates through Yoga's envelop,
 * src/server/graphql-ws.ts) are refused alike; `__typename` stays allowed.
 */
export function useIntrospectionSwitch(options: { enabled: boolean }): Plugin {
  if (options.enabled) return {};
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}
