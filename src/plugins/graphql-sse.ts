import { randomUUID } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import type { Logger } from '../lib/logger.ts';

/** graphql-sse's server-agnostic response for errors before execution: JSON `errors`, 4xx. */
function requestErrorResponse(errors: readonly GraphQLError[] | readonly unknown[]) {
  const status =
    (errors as { extensions?: { http?: { status?: number } } }[]).find((e) => e.extensions?.http?.status)
      ?.extensions?.http?.status ?? 400;
  // As Yoga does, `extensions.http` steers the response and is not sent.
  const body = (errors as GraphQLError[]).map((error) => {
    const { http: _http, ...extensions } = (error.extensions ?? {}) as Record<string, unknown>;
    return { message: error.message, ...(error.locations ? { locations: error.locations } : {}), extensions };
  });
  return [
    JSON.stringify({ errors: body }),
    {
      status,
      statusText: status === 401 ? 'Unauthorized' : 'Bad Request',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    },
  ] as [string, { status: number; statusText: string; headers: Record<string, string> }];
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as AsyncIterable<unknown>)?.[Symbol.asyncIterator] === 'function';
}

/** Path of the graphql-sse endpoint (both modes of the graphql-sse protocol). */
export const GRAPHQL_SSE_PATH = '/graphql/stream';

/**
 * The graphql-sse protocol (github.com/enisdenjo/graphql-sse, PROTOCOL.md) at `/graphql/stream`, in
 * both of its modes:
 * - distinct connections: `POST`/`GET` with `Accept: text/event-stream`, one stream per operation
 *   (`/graphql` answers this mode too, through Yoga's own SSE);
 * - single connection: `PUT` reserves a stream and returns its token, `GET` with
 *   `X-GraphQL-Event-Stream-Token` opens it, `POST`s with the same header start operations on it and
 *   `DELETE ?operationId=` stops one.
 *
 * Every request needs a valid `Authorization: Bearer <JWT>` (`authenticate`, the check HTTP and SSE
 * share); a refused one gets 401 with a JSON `errors` body naming the code, before a stream is
 * reserved. Each operation runs through Yoga's whole request pipeline (`getResultForParams`): its
 * `onParams` plugins (persisted operations), parse and validation limits (graphql-armor), context
 * (auth, per operation), execution and error masking, exactly as on `/graphql`. Unlike
 * `@graphql-yoga/plugin-graphql-sse`, which parses `params.query` itself and so skipped persisted
 * operations (and let `PERSISTED_OPERATIONS=require` be bypassed).
 */
export function useGraphQLSSE(options: {
  /** Throws a GraphQLError (code, `http.status`) when the request's `Authorization` is not accepted. */
  authenticate(authorization: string | null): Promise<unknown>;
  logger: Logger;
}): Plugin {
  const serverContexts = new WeakMap<Request, Record<string, unknown>>();
  let handler: ((request: Request) => Promise<Response>) | undefined;
  return {
    onYogaInit({ yoga }) {
      const server = yoga as unknown as YogaServerInstance<Record<string, unknown>, Record<string, unknown>>;
      handler = createHandler(
        {
          async authenticate(req) {
            try {
              await options.authenticate(req.headers.get('authorization') ?? null);
            } catch (error) {
              if (!(error instanceof GraphQLError)) throw error;
              const status = (error.extensions.http as { status?: number } | undefined)?.status ?? 401;
              // graphql-sse's server-agnostic response: [body, init].
              return [
                JSON.stringify({
                  errors: [{ message: error.message, extensions: { code: error.extensions.code } }],
                }),
                {
                  status,
                  statusText: status === 401 ? 'Unauthorized' : 'Forbidden',
                  headers: { 'content-type': 'application/json; charset=utf-8' },
                },
              ];
            }
            return (
              req.headers.get('x-graphql-event-stream-token') ??
              new URL(req.url, 'http://localhost').searchParams.get('token') ??
              randomUUID()
            );
          },
          async onSubscribe(req, params) {
            let result: Awaited<ReturnType<typeof server.getResultForParams>>;
            try {
              result = await server.getResultForParams(
                { params: { ...params }, request: req.raw },
                serverContexts.get(req.raw) ?? {},
              );
            } catch (error) {
              // Thrown before execution (persisted operations' refusals): the client's mistake.
              if (!(error instanceof GraphQLError)) {
                options.logger.error({ err: (error as Error).message }, 'graphql-sse operation failed');
              }
              return requestErrorResponse([
                error instanceof GraphQLError ? error : new GraphQLError('Unexpected error.'),
              ]);
            }
            // A result without `data` is a request error (parse, validation, context): answered as
            // /graphql answers it, not streamed (graphql-sse would take it for execution arguments).
            if (result && !isAsyncIterable(result) && !('data' in result) && result.errors?.length) {
              return requestErrorResponse(result.errors);
            }
            return result;
          },
        },
        yoga.fetchAPI,
      );
    },
    onRequest({ request, url, endResponse, serverContext }) {
      if (url.pathname !== GRAPHQL_SSE_PATH || !handler) return;
      serverContexts.set(request, serverContext as Record<string, unknown>);
      return handler(request).then(endResponse);
    },
  };
}
