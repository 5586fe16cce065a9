import { createGraphQLError, type Plugin } from 'graphql-yoga';

/** Search parameters of a GraphQL GET request that carry JSON objects. */
const JSON_OBJECT_PARAMETERS = ['variables', 'extensions'] as const;

/**
 * Client mistakes in a GET request are client errors (issue 10, class 5): a `variables` or
 * `extensions` search parameter that is not a JSON object is answered 400, code `BAD_REQUEST` (as
 * Yoga answers a malformed JSON body), naming the parameter and never quoting it; Yoga's own GET
 * parser would throw the SyntaxError and answer 500.
 */
export function useRequestInputChecks(): Plugin {
  return {
    onRequestParse({ request }) {
      if (request.method !== 'GET') return;
      const query = request.url.indexOf('?');
      if (query < 0) return;
      const parameters = new URLSearchParams(request.url.slice(query + 1));
      for (const name of JSON_OBJECT_PARAMETERS) {
        const raw = parameters.get(name);
        if (raw === null || raw === '') continue;
        let value: unknown;
        try {
          value = JSON.parse(raw);
        } catch {
          value = undefined;
        }
        if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
          throw createGraphQLError(`The ${name} search parameter must be a JSON object`, {
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          });
        }
      }
    },
  };
}
