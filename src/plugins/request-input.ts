import type { Plugin } from 'graphql-yoga';
import { refusal } from '../lib/transport-errors.ts';

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
      checkSearchParameters(new URLSearchParams(request.url.slice(query + 1)));
    },
  };
}

/**
 * Checks the JSON search parameters of a GraphQL GET request (see {@link useRequestInputChecks});
 * also run by the lean HTTP path (src/server/graphql-http.ts), which reads GET requests itself.
 * @throws GraphQLError `BAD_REQUEST` (400) naming the first parameter that is not a JSON object.
 */
export function checkSearchParameters(parameters: URLSearchParams): void {
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
      throw refusal('BAD_REQUEST', `The ${name} search parameter must be a JSON object`);
    }
  }
}
