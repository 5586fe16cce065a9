import { GraphQLError } from 'graphql';
import type { Response as GraphqlSseResponse } from 'graphql-sse';
import type { Logger } from '../lib/logger.ts';
import {
  errorsAnswer,
  internalError,
  JSON_CONTENT_TYPE,
  type JsonAnswer,
  jsonAnswer,
} from '../lib/transport-errors.ts';

/**
 * What the graphql-sse endpoint (src/plugins/graphql-sse.ts) answers besides a stream: its refusals
 * as graphql-sse's server-agnostic `[body, init]`, each a JSON `errors` body whose every error carries
 * `extensions.code` (src/lib/transport-errors.ts), never a word of the client's input.
 */

/** graphql-sse's `[body, init]` of a string body (a JSON answer, or graphql-sse's own). */
export type TextAnswer = readonly [string | null, GraphqlSseResponse[1]];

/** Error codes of the graphql-sse endpoint's own refusals and of graphql-sse's, by what they refuse. */
export const SSE_ERROR_CODES = {
  /** 429: the stream already runs `maxOperationsPerStream` operations (graphql-ws's code). */
  tooManyOperations: 'too-many-subscriptions',
  /** 429: the client already holds `maxUnopenedStreamsPerClient` reserved, unopened streams. */
  tooManyUnopenedStreams: 'too-many-unopened-streams',
  /** 404: no stream with this token was reserved by this client (unknown, expired, closed or another client's). */
  streamNotFound: 'stream-not-found',
  /** 409: the stream is open already (a second `GET`). */
  streamAlreadyOpen: 'stream-already-open',
  /** 409: an operation with this id runs on the stream already. */
  operationIdInUse: 'operation-id-in-use',
  /** 400: a `POST` on a stream without `extensions.operationId`. */
  operationIdMissing: 'operation-id-missing',
  /** 405: a method the protocol does not have, or a mutation over `GET`. */
  methodNotAllowed: 'method-not-allowed',
  /** 406: a `PUT` that does not accept `text/plain`, or a `GET` stream that does not accept `text/event-stream`. */
  notAcceptable: 'not-acceptable',
  /** 415: a `POST` whose body is not `application/json`. */
  unsupportedMediaType: 'unsupported-media-type',
  /** 400: a request graphql-sse could not read (Yoga's code for the same on `/graphql`), a `DELETE` without `?operationId=`. */
  badRequest: 'BAD_REQUEST',
} as const;

/** A JSON answer as graphql-sse's `[body, init]`. */
function asGraphqlSseResponse(answer: JsonAnswer) {
  return [
    answer.body,
    { status: answer.status, statusText: answer.statusText, headers: { ...answer.headers } },
  ] as [string, { status: number; statusText: string; headers: Record<string, string> }];
}

/** A refusal of the endpoint itself: `code` in `extensions`, answered with `status`. */
export function refusal(status: number, code: string, message: string) {
  return asGraphqlSseResponse(
    errorsAnswer([new GraphQLError(message, { extensions: { code, http: { status } } })]),
  );
}

/** The internal error (500 `internal-error`): a failure of the gateway inside graphql-sse's handler. */
export function internalErrorAnswer() {
  return asGraphqlSseResponse(errorsAnswer([internalError()]));
}

/**
 * The answer to a refused `Authorization` (the token check's GraphQLError with its code and
 * `http.status`, 401 when none), before any stream is reserved. Also the shared distinct-connections
 * path's answer (src/server/graphql-http.ts), so both answer a refused token alike.
 */
export function authRefusal(error: GraphQLError) {
  const status = (error.extensions.http as { status?: number } | undefined)?.status ?? 401;
  return asGraphqlSseResponse(
    jsonAnswer(status, { errors: [{ message: error.message, extensions: { code: error.extensions.code } }] }),
  );
}

/**
 * The answer to an operation refused before it streams: `failure` is what Yoga's
 * `getResultForParams` threw (a GraphQLError is the client's mistake; anything else is logged and
 * answered as the internal error, 500 `internal-error`) or its `errors` when it answered without
 * `data` (parse, validation, limits, context).
 */
export function refusedOperation(
  failure: { thrown: unknown } | { errors: readonly unknown[] },
  logger: Logger,
) {
  if (!('thrown' in failure)) return asGraphqlSseResponse(errorsAnswer(failure.errors));
  if (failure.thrown instanceof GraphQLError) return asGraphqlSseResponse(errorsAnswer([failure.thrown]));
  logger.error({ err: (failure.thrown as Error)?.message }, 'graphql-sse operation failed');
  return internalErrorAnswer();
}

/**
 * {@link refusedOperation} typed ({@link typedRefusal}) as a Fetch response, for the shared
 * distinct-connections path (src/server/graphql-http.ts).
 * @returns the response and the codes to add to the request's access line.
 */
export function operationRefusal(
  fetchAPI: { Response: typeof Response },
  failure: { thrown: unknown } | { errors: readonly unknown[] },
  logger: Logger,
): { response: Response; codes: string[] } {
  const { answer, codes } = typedRefusal(refusedOperation(failure, logger), 'POST');
  return { response: new fetchAPI.Response(answer[0], answer[1]), codes };
}

/**
 * graphql-sse's own refusals (it answers them without a code), by status and the request's method:
 * the code and message the gateway answers with. graphql-sse's own words are never passed on (a JSON
 * parser's message quotes the body, and so any card number in it); what is known of the refusal is
 * its status, and which request got it.
 */
function graphqlSseRefusal(status: number, method: string): [code: string, message: string] {
  if (status === 409 && method === 'POST') {
    return [SSE_ERROR_CODES.operationIdInUse, 'An operation with this id runs on this stream already'];
  }
  const known: Record<number, [string, string]> = {
    404: [SSE_ERROR_CODES.streamNotFound, 'No stream of this client has this token'],
    405: [
      SSE_ERROR_CODES.methodNotAllowed,
      'Method not allowed here (a mutation over GET, or a method graphql-sse does not have)',
    ],
    406: [
      SSE_ERROR_CODES.notAcceptable,
      'Not acceptable: a PUT accepts text/plain, a stream text/event-stream',
    ],
    409: [SSE_ERROR_CODES.streamAlreadyOpen, 'This stream is open already'],
    415: [SSE_ERROR_CODES.unsupportedMediaType, 'Unsupported media type: send application/json'],
  };
  return (
    known[status] ?? [
      SSE_ERROR_CODES.badRequest,
      'Not a graphql-sse request this gateway can read: send `query` as a string, `variables` and `extensions` as JSON objects',
    ]
  );
}

/**
 * A 4xx answer as the gateway's refusals are. An answer whose errors all carry a code already (the
 * gateway's refusals, Yoga's results) and any other status (5xx: the internal error) is kept; any
 * other (graphql-sse's own, uncoded) is replaced by {@link graphqlSseRefusal}'s.
 * @param method the request's method (a 409 of a POST is another refusal than a GET's).
 * @returns the answer and the codes it was given here (for the access line).
 */
export function typedRefusal(answer: TextAnswer, method: string): { answer: TextAnswer; codes: string[] } {
  const [body, init] = answer;
  if (init.status < 400 || init.status >= 500) return { answer, codes: [] };
  let sent: { extensions?: { code?: unknown } }[] = [];
  try {
    const parsed = body ? (JSON.parse(body) as { errors?: unknown }) : undefined;
    if (Array.isArray(parsed?.errors)) sent = parsed.errors;
  } catch {
    // Not JSON: answered from the status below.
  }
  if (sent.length > 0 && sent.every((error) => typeof error.extensions?.code === 'string')) {
    return { answer, codes: [] };
  }
  const [code, message] = graphqlSseRefusal(init.status, method);
  const headers = { ...init.headers, 'content-type': JSON_CONTENT_TYPE };
  return {
    answer: [JSON.stringify({ errors: [{ message, extensions: { code } }] }), { ...init, headers }],
    codes: [code],
  };
}
