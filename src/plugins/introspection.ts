import {
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * `INTROSPECTION=off`: rejects `__schema` and `__type` at validation (graphql-js's
 * `NoSchemaIntrospectionCustomRule`, a GRAPHQL_VALIDATION_FAILED error), and in subgraph mode
 * (`FEDERATION=on`) `Query._service`, whose SDL is the whole schema too: a router composing from a
 * supergraph file never asks for it, and the SDL is published from the build instead
 * (`npm run -s schema -- --subgraph`). It hooks validation itself rather than the HTTP request, so
 * HTTP, SSE and graphql-ws (which validates through Yoga's envelop, src/server/graphql-ws.ts) are
 * refused alike; `__typename` and `_entities` stay allowed.
 */
export function useIntrospectionSwitch(options: { enabled: boolean }): Plugin {
  if (options.enabled) return {};
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
      addValidationRule(NoSubgraphSdlRule);
    },
  };
}

/** Refuses `Query._service` (the subgraph SDL), worded as graphql-js refuses `__schema`. */
const NoSubgraphSdlRule: ValidationRule = (context: ValidationContext) => ({
  Field(node) {
    if (node.name.value !== '_service') return;
    if (context.getParentType() !== context.getSchema().getQueryType()) return;
    context.reportError(
      new GraphQLError(
        'GraphQL introspection has been disabled, but the requested query contained the field "_service".',
        { nodes: node },
      ),
    );
  },
});
