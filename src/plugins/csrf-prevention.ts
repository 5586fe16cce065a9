import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { GraphQLError } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * Headers that mark a request as sent by a script (a browser preflights them), any one of which lets
 * a request with a "simple" content type through: Yoga's own and Apollo Client's.
 */
export const CSRF_HEADERS = ['x-graphql-yoga-csrf', 'apollo-require-preflight'] as const;

/** Body types a browser form can send cross-site without a preflight; never accepted for GraphQL. */
const FORM_CONTENT_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data']);

/**
 * CSRF prevention for browser-originated requests (issue 10, class 9). A page on another site can
 * make a browser send a form or a "simple" request with the user's cookies, without a CORS
 * preflight; so:
 * - GraphQL over a form body (`application/x-www-form-urlencoded`, `multipart/form-data`) is refused
 *   outright: 415, code `unsupported-media-type` (cardgraph takes no uploads);
 * - any other non-GET request must be JSON (or another content type a browser preflights), or carry
 *   one of {@link CSRF_HEADERS}: else 403, code `csrf-header-required`
 *   (`@graphql-yoga/plugin-csrf-prevention` decides);
 * - GET needs neither: Yoga runs no mutation over GET (405), and CORS keeps other sites from reading
 *   the answer.
 */
export function useCsrfPrevention(): Plugin {
  const library = useCSRFPrevention({ requestHeaders: [...CSRF_HEADERS] });
  return {
    onRequestParse(payload) {
      const { request } = payload;
      if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
      const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (FORM_CONTENT_TYPES.has(mediaType)) {
        throw createGraphQLError('GraphQL requests must be sent as application/json', {
          extensions: { code: 'unsupported-media-type', http: { status: 415 } },
        });
      }
      try {
        return library.onRequestParse?.(payload);
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        throw createGraphQLError(
          `Send the request as application/json, or with one of the headers ${CSRF_HEADERS.join(', ')}`,
          { extensions: { code: 'csrf-header-required', http: { status: 403 } } },
        );
      }
    },
  };
}
