import { randomUUID } from 'node:crypto';
import { type ExecutionResult, GraphQLError } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import { onTokenExpiry, tokenExpiredError, untilExpired } from '../auth/token-expiry.ts';
import type { Viewer } from '../auth/viewer.ts';
import type { Logger } from '../lib/logger.ts';
import { requestRecordOf } from '../lib/request-record.ts';
import {
  errorsAnswer,
  internalError,
  JSON_CONTENT_TYPE,
  type JsonAnswer,
  jsonAnswer,
} from '../lib/transport-errors.ts';

/**
 * What graphql-sse's single-connection mode needs of the live-subscription hub (src/live/hub.ts, a
 * layer above the plugins: passed in, never imported): whether `getResultForParams` answered with a
 * member of a shared execution, that member's results, which graphql-sse frames with the
 * operation's id, and its end at a token's expiry (`expire`: its `token-expired` result, counted as
 * the hub counts its own, then its end), called when the stream's token expires.
 */
export interface LiveStreams {
  owns(result: unknown): result is LiveMember;
}

/** A member of a shared execution, as graphql-sse's single-connection mode reads it ({@link LiveStreams}). */
export interface LiveMember {
  results(): AsyncGenerator<ExecutionResult, undefined, undefined>;
  expire(): void;
}

/** The server context graphql-sse's operations run with (src/runtime/index.ts `ServerContext`). */
type LiveServerContext = {
  viewer?: Viewer | null;
  live?: { endsAtTokenExpiry: boolean };
};

/** `[body, init]` of a JSON answer, graphql-sse's server-agnostic response. */
function asGraphqlSseResponse(answer: JsonAnswer) {
  return [
    answer.body,
    { status: answer.status, statusText: answer.statusText, headers: { ...answer.headers } },
  ] as [string, { status: number; statusText: string; headers: Record<string, string> }];
}

/**
 * graphql-sse's server-agnostic response for errors before execution: the transport error model's
 * answer (src/lib/transport-errors.ts): JSON `errors`, the refusal's status, 500 for the internal error.
 */
function requestErrorResponse(errors: readonly GraphQLError[] | readonly unknown[]) {
  return asGraphqlSseResponse(errorsAnswer(errors));
}

/**
 * graphql-sse's answer to a refused `Authorization` (`authenticate`'s GraphQLError with its code and
 * `http.status`, 401 when none): a JSON `errors` body with the message and code, as graphql-sse's
 * server-agnostic `[body, init]`. Also the shared distinct-connections path's answer
 * (src/server/graphql-http.ts), so both answer a refused token alike.
 */
export function authRefusal(error: GraphQLError) {
  const status = (error.extensions.http as { status?: number } | undefined)?.status ?? 401;
  return asGraphqlSseResponse(
    jsonAnswer(status, { errors: [{ message: error.message, extensions: { code: error.extensions.code } }] }),
  );
}

/**
 * The answer graphql-sse's handler gives an operation refused before it streams (as its
 * `onSubscribe` in {@link useGraphQLSSE} answers it): `failure` is what Yoga's
 * `getResultForParams` threw (a GraphQLError is the client's mistake; anything else is logged and
 * answered as the internal error, 500 `internal-error`) or its result without `data` (`errors`:
 * parse, validation, limits, context).
 * @returns the Fetch response and the codes to add to the request's access line.
 */
export async function operationRefusal(
  fetchAPI: { Response: typeof Response; Headers: typeof Headers },
  failure: { thrown: unknown } | { errors: readonly unknown[] },
  logger: Logger,
): Promise<{ response: Response; codes: string[] }> {
  let errors: readonly unknown[];
  if ('thrown' in failure) {
    const error = failure.thrown;
    if (!(error instanceof GraphQLError)) {
      logger.error({ err: (error as Error)?.message }, 'graphql-sse operation failed');
    }
    errors = [error instanceof GraphQLError ? error : internalError()];
  } else {
    errors = failure.errors;
  }
  const [body, init] = requestErrorResponse(errors);
  return typedRefusal(fetchAPI, new fetchAPI.Response(body, init), 'POST');
}

/** A refusal of the single-connection mode: `code` in `extensions`, answered with `status`. */
function refusal(status: number, code: string, message: string) {
  return requestErrorResponse([new GraphQLError(message, { extensions: { code, http: { status } } })]);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as AsyncIterable<unknown>)?.[Symbol.asyncIterator] === 'function';
}

/** Path of the graphql-sse endpoint (both modes of the graphql-sse protocol). */
export const GRAPHQL_SSE_PATH = '/graphql/stream';

/** Error codes of the single-connection mode's own refusals (JSON `errors` body, see useGraphQLSSE). */
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
  /** 400: a `POST` or `DELETE` on a stream without `extensions.operationId` / `?operationId=`. */
  operationIdMissing: 'operation-id-missing',
  /** 405: a method the protocol does not have, or a mutation over `GET`. */
  methodNotAllowed: 'method-not-allowed',
  /** 406: a `PUT` that does not accept `text/plain`, or a `GET` stream that does not accept `text/event-stream`. */
  notAcceptable: 'not-acceptable',
  /** 415: a `POST` whose body is not `application/json`. */
  unsupportedMediaType: 'unsupported-media-type',
  /** 400: a request graphql-sse could not read (Yoga's code for the same on `/graphql`). */
  badRequest: 'BAD_REQUEST',
} as const;

/**
 * graphql-sse's own refusals (it answers them without a code), by status and the request's method:
 * the code and message the gateway answers with. graphql-sse's own words are never passed on (a JSON
 * parser's message quotes the body, and so any card number in it); what is known of the refusal is
 * its status, and which request got it.
 */
function graphqlSseRefusal(status: number, method: string): { code: string; message: string } {
  switch (status) {
    case 404:
      return { code: SSE_ERROR_CODES.streamNotFound, message: 'No stream of this client has this token' };
    case 405:
      return {
        code: SSE_ERROR_CODES.methodNotAllowed,
        message: 'Method not allowed here (a mutation over GET, or a method graphql-sse does not have)',
      };
    case 406:
      return {
        code: SSE_ERROR_CODES.notAcceptable,
        message: 'Not acceptable: a PUT accepts text/plain, a stream text/event-stream',
      };
    case 409:
      return method === 'POST'
        ? {
            code: SSE_ERROR_CODES.operationIdInUse,
            message: 'An operation with this id runs on this stream already',
          }
        : { code: SSE_ERROR_CODES.streamAlreadyOpen, message: 'This stream is open already' };
    case 415:
      return {
        code: SSE_ERROR_CODES.unsupportedMediaType,
        message: 'Unsupported media type: send application/json',
      };
    default:
      return {
        code: SSE_ERROR_CODES.badRequest,
        message:
          'Not a graphql-sse request this gateway can read: send `query` as a string, `variables` and `extensions` as JSON objects',
      };
  }
}

/**
 * A 4xx answer of graphql-sse itself as the gateway's refusals are: a JSON `errors` body whose every
 * error carries `extensions.code` ({@link graphqlSseRefusal}), and no word of the client's input. An
 * answer whose errors all carry a code already (the gateway's refusals, Yoga's results) and any
 * other status (5xx: the internal error) are returned as they are.
 * @param fetchAPI Yoga's Fetch API (its `Response` and `Headers`).
 * @param method the request's method (a 409 of a POST is another refusal than a GET's).
 * @returns the response and the codes it carries (for the access line).
 */
async function typedRefusal(
  fetchAPI: { Response: typeof Response; Headers: typeof Headers },
  response: Response,
  method: string,
): Promise<{ response: Response; codes: string[] }> {
  if (response.status < 400 || response.status >= 500) return { response, codes: [] };
  const text = await response.text();
  let sent: { extensions?: { code?: unknown } }[] = [];
  try {
    const parsed = text ? (JSON.parse(text) as { errors?: unknown }) : undefined;
    if (Array.isArray(parsed?.errors)) sent = parsed.errors;
  } catch {
    // Not JSON: answered from the status below.
  }
  const headers = new fetchAPI.Headers(response.headers);
  const init = { status: response.status, statusText: response.statusText, headers };
  if (sent.length > 0 && sent.every((error) => typeof error.extensions?.code === 'string')) {
    return { response: new fetchAPI.Response(text, init), codes: [] };
  }
  const { code, message } = graphqlSseRefusal(response.status, method);
  headers.set('content-type', JSON_CONTENT_TYPE);
  headers.delete('content-length');
  return {
    response: new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code } }] }), init),
    codes: [code],
  };
}

/** Limits of the single-connection mode (src/config.ts: `websocket`, `sse`). */
export interface GraphQLSSELimits {
  /** Operations one stream may run at once (graphql-ws's `maxSubscriptionsPerSocket`). */
  maxOperationsPerStream: number;
  /** Time (ms) a reserved stream has to be opened by its GET before it is dropped (graphql-ws's `connectionInitTimeoutMs`). */
  reservationTimeoutMs: number;
  /** Reserved, unopened streams one client (token subject and vaults) may hold at once. */
  maxUnopenedStreamsPerClient: number;
}

/** An operation's place on its stream; the object tells a reused id's slot from the old one's. */
interface Slot {
  /** graphql-sse has its result (it streams it until it completes or is stopped). */
  started: boolean;
}

/** One single-connection stream (a PUT's token), from the PUT until its GET stream ends or it expires. */
interface Reservation {
  token: string;
  /** Who reserved it: {@link principalOf} the token's viewer. */
  principal: string;
  /** Its GET has been accepted (no longer counts as unopened, no expiry). */
  opened: boolean;
  /**
   * It takes no more operations: its GET's token expired (its stream ends once its started operations
   * have completed) or its stream ended. Operations still starting on it end at once.
   */
  closed: boolean;
  /** Running operations by operation id. */
  operations: Map<string, Slot>;
  /** Ends its started operations with a `token-expired` result (see `untilExpired`). */
  expireOperations: Set<() => void>;
  /** Ends its opened GET stream through graphql-sse's own cleanup. */
  endStream?: () => void;
  expiry?: NodeJS.Timeout;
}

/**
 * The client a reservation belongs to: the token's subject with its vaults (order-free). Two tokens
 * of one subject for the same vaults (a refreshed token) are the same client.
 */
function principalOf(viewer: Viewer): string {
  return JSON.stringify([viewer.subject, [...viewer.vaults].sort()]);
}

/**
 * The graphql-sse protocol (github.com/enisdenjo/graphql-sse, PROTOCOL.md) at `/graphql/stream`, in
 * both of its modes:
 * - distinct connections: `POST`/`GET` with `Accept: text/event-stream`, one stream per operation
 *   (`/graphql` answers this mode too, through Yoga's own SSE);
 * - single connection: `PUT` reserves a stream and returns its token, `GET` with
 *   `X-GraphQL-Event-Stream-Token` (or `?token=`) opens it, `POST`s with the same header start
 *   operations on it and `DELETE ?operationId=` stops one.
 *
 * Every request needs a valid `Authorization: Bearer <JWT>` (`authenticate`, the check HTTP and SSE
 * share); a refused one gets 401 with a JSON `errors` body naming the code, before a stream is
 * reserved. Each operation runs through Yoga's whole request pipeline (`getResultForParams`): its
 * `onParams` plugins (persisted operations), parse and validation limits (graphql-armor), context
 * (auth, per operation), execution and error masking, exactly as on `/graphql`. Unlike
 * `@graphql-yoga/plugin-graphql-sse`, which parses `params.query` itself and so skipped persisted
 * operations (and let `PERSISTED_OPERATIONS=require` be bypassed). With `sharedSse`, a live
 * subscription then joins the shared execution of its operation (the live-subscription hub, src/live/hub.ts, issue 21
 * item 1) instead of running alone; a distinct-connections live subscription is served before this
 * handler by the lean path (src/server/graphql-http.ts), which hands anything else over to it.
 *
 * Single-connection streams hold graphql-ws's limits (`limits`), answered as a JSON `errors` body
 * with the code in `extensions` ({@link SSE_ERROR_CODES}):
 * - the token is always the server's (a random UUID); one a client sends with a `PUT` is ignored;
 * - a stream belongs to the client that reserved it (token subject and vaults): any other request
 *   naming its token, like one naming an unknown, expired or closed stream, gets 404
 *   `stream-not-found` (so a token's existence is not revealed);
 * - a `PUT` beyond `maxUnopenedStreamsPerClient` unopened streams of its client gets 429
 *   `too-many-unopened-streams`; a stream not opened within `reservationTimeoutMs` is dropped with
 *   the operations started on it;
 * - a `POST` beyond `maxOperationsPerStream` running operations gets 429 `too-many-subscriptions`;
 *   a slot is freed when its operation completes, is stopped (`DELETE`) or its stream ends;
 * - an opened stream lives at most until the `exp` of the token its `GET` was opened with (`Viewer`
 *   `expiresAt`), as graphql-ws closes its socket with 4403 then: at that instant its running
 *   operations end with one last result carrying a `token-expired` error and a `complete` (also those
 *   started with a token that lives longer), and once they are written the event stream ends and the
 *   stream is released (any request naming it gets 404 `stream-not-found`). A `GET` with an expired
 *   token is refused like any request (401 `token-expired`).
 *
 * graphql-sse's own refusals (either mode) are answered the same way, by {@link typedRefusal}: a JSON
 * `errors` body with a code ({@link SSE_ERROR_CODES}), never a word of the client's input.
 */
export function useGraphQLSSE(options: {
  /**
   * The request's viewer; throws a GraphQLError (code, `http.status`) when the request's
   * `Authorization` is not accepted.
   */
  authenticate(authorization: string | null): Promise<Viewer>;
  limits: GraphQLSSELimits;
  logger: Logger;
  /**
   * Live subscriptions join the shared executions of the live-subscription hub: one execution and
   * one redaction per event for every member, whatever its transport; graphql-sse frames each
   * member's events (its operation id). Without it every operation runs alone.
   */
  live?: LiveStreams;
}): Plugin {
  const { limits } = options;
  const serverContexts = new WeakMap<Request, Record<string, unknown>>();
  /** The viewer `authenticate` accepted for a request (its operations are not verified again). */
  const viewers = new WeakMap<Request, Viewer>();
  /** Single-connection streams by token. */
  const reservations = new Map<string, Reservation>();
  /** Unopened reservations per principal. */
  const unopened = new Map<string, number>();
  /** The reservation a request names (set by `authenticate` once the principal matches). */
  const reservationOf = new WeakMap<Request, Reservation>();
  /** The operation slot a POST took (freed on completion). */
  const slotOf = new WeakMap<Request, { reservation: Reservation; id: string; slot: Slot }>();
  /** A PUT's new reservation, kept only when graphql-sse answers 201. */
  const reservedBy = new WeakMap<Request, Reservation>();
  /** A GET that opens its reservation, with its token's `exp` (ms): its stream's end releases it. */
  const openedBy = new WeakMap<Request, { reservation: Reservation; expiresAt: number }>();
  /**
   * A POST's operation id as graphql-sse reserved it on its stream before `onSubscribe`: graphql-sse
   * keeps it when `onSubscribe` refuses the operation, so a refusal gives it back.
   */
  const operationIdOf = new WeakMap<Request, { reservation: Reservation; id: string }>();
  /** Our own requests (dropping an expired reservation through graphql-sse's handler). */
  const internal = new WeakSet<Request>();
  let handler: ((request: Request) => Promise<Response>) | undefined;
  let fetchAPI: YogaServerInstance<Record<string, unknown>, Record<string, unknown>>['fetchAPI'];

  const countUnopened = (principal: string, delta: number) => {
    const count = (unopened.get(principal) ?? 0) + delta;
    if (count > 0) unopened.set(principal, count);
    else unopened.delete(principal);
  };
  const markOpened = (reservation: Reservation) => {
    if (reservation.opened) return;
    reservation.opened = true;
    clearTimeout(reservation.expiry);
    countUnopened(reservation.principal, -1);
  };
  /** Takes a reservation out of use (idempotent): requests naming it get 404 from now on. */
  const close = (reservation: Reservation) => {
    reservation.closed = true;
    if (reservations.get(reservation.token) === reservation) reservations.delete(reservation.token);
  };
  /** Forgets a reservation (idempotent); its graphql-sse stream is gone or going. */
  const release = (reservation: Reservation) => {
    close(reservation);
    markOpened(reservation);
    reservation.operations.clear();
    reservation.expireOperations.clear();
    reservation.endStream = undefined;
  };
  /** Ends an expired reservation's stream once none of its operations is still being written. */
  const endWhenIdle = (reservation: Reservation) => {
    if (!reservation.closed || [...reservation.operations.values()].some((slot) => slot.started)) return;
    const endStream = reservation.endStream;
    reservation.endStream = undefined;
    endStream?.();
  };
  /**
   * The token the opening GET was opened with expired: the stream takes no more requests, its
   * started operations end with a `token-expired` result, then (their `complete` written) the stream
   * ends.
   */
  const expireStream = (reservation: Reservation) => {
    if (reservation.closed) return;
    close(reservation);
    const expire = [...reservation.expireOperations];
    reservation.expireOperations.clear();
    for (const end of expire) end();
    endWhenIdle(reservation);
  };
  /** `untilExpired`'s watch of an operation on `reservation`: it ends with the stream's token. */
  const watchExpiry = (reservation: Reservation) => (expire: () => void) => {
    if (reservation.closed) {
      expire();
      return () => {};
    }
    reservation.expireOperations.add(expire);
    return () => reservation.expireOperations.delete(expire);
  };
  /** A refusal of {@link refusal}, its code also in the request's access line. */
  const refuse = (request: Request, status: number, code: string, message: string) => {
    requestRecordOf(serverContexts.get(request))?.errorCodes.add(code);
    return refusal(status, code, message);
  };
  const freeSlot = (taken: { reservation: Reservation; id: string; slot: Slot } | undefined) => {
    if (taken && taken.reservation.operations.get(taken.id) === taken.slot) {
      taken.reservation.operations.delete(taken.id);
      endWhenIdle(taken.reservation);
    }
  };
  /**
   * Gives a refused operation's id back to its stream: graphql-sse reserves the id before
   * `onSubscribe` and keeps it when `onSubscribe` answers with a refusal, so the client could never
   * use that id again on the stream (409). An internal DELETE removes it through graphql-sse's own
   * handling.
   */
  const forgetOperationId = async (reservation: Reservation, id: string) => {
    const request = new fetchAPI.Request(
      `http://localhost${GRAPHQL_SSE_PATH}?operationId=${encodeURIComponent(id)}`,
      { method: 'DELETE', headers: { 'x-graphql-event-stream-token': reservation.token } },
    );
    internal.add(request);
    await handler!(request);
  };
  /**
   * Drops a reservation that was not opened in time, with the operations started on it: graphql-sse
   * keeps its streams to itself, so it is opened by an internal GET whose stream is cancelled at once
   * (graphql-sse then deletes the stream and returns its operations).
   */
  const expire = async (reservation: Reservation) => {
    if (reservation.opened) return;
    release(reservation);
    const request = new fetchAPI.Request(`http://localhost${GRAPHQL_SSE_PATH}`, {
      headers: { accept: 'text/event-stream', 'x-graphql-event-stream-token': reservation.token },
    });
    internal.add(request);
    const response = await handler!(request);
    await response.body?.cancel();
  };

  return {
    onYogaInit({ yoga }) {
      const server = yoga as unknown as YogaServerInstance<Record<string, unknown>, Record<string, unknown>>;
      fetchAPI = server.fetchAPI;
      handler = createHandler(
        {
          async authenticate(req) {
            if (internal.has(req.raw)) return req.headers.get('x-graphql-event-stream-token');
            let viewer: Viewer;
            try {
              viewer = await options.authenticate(req.headers.get('authorization') ?? null);
            } catch (error) {
              if (!(error instanceof GraphQLError)) throw error;
              return authRefusal(error);
            }
            viewers.set(req.raw, viewer);
            const principal = principalOf(viewer);
            if (req.method === 'PUT') {
              // The server chooses the token, never the client.
              if ((unopened.get(principal) ?? 0) >= limits.maxUnopenedStreamsPerClient) {
                return refuse(
                  req.raw,
                  429,
                  SSE_ERROR_CODES.tooManyUnopenedStreams,
                  `At most ${limits.maxUnopenedStreamsPerClient} unopened streams per client: open (GET) a reserved stream first`,
                );
              }
              const reservation: Reservation = {
                token: randomUUID(),
                principal,
                opened: false,
                closed: false,
                operations: new Map(),
                expireOperations: new Set(),
              };
              reservation.expiry = setTimeout(() => {
                expire(reservation).catch((error: unknown) =>
                  options.logger.error(
                    { err: (error as Error).message },
                    'graphql-sse reservation not dropped',
                  ),
                );
              }, limits.reservationTimeoutMs).unref();
              reservations.set(reservation.token, reservation);
              countUnopened(principal, 1);
              reservedBy.set(req.raw, reservation);
              return reservation.token;
            }
            const token = streamTokenOf(req.raw);
            const eventStream = req.headers.get('accept') === 'text/event-stream';
            // Distinct connections mode: no token, one stream per request.
            if (token === null && eventStream) return null;
            const reservation = token === null ? undefined : reservations.get(token);
            if (!reservation || reservation.principal !== principal) {
              return refuse(
                req.raw,
                404,
                SSE_ERROR_CODES.streamNotFound,
                token === null
                  ? 'Send the token of a reserved (PUT) stream in X-GraphQL-Event-Stream-Token'
                  : 'No stream of this client has this token (expired, closed or never reserved)',
              );
            }
            reservationOf.set(req.raw, reservation);
            if (eventStream) {
              // Opens the stream (graphql-sse answers 409 when it is open already).
              if (!reservation.opened) openedBy.set(req.raw, { reservation, expiresAt: viewer.expiresAt });
              markOpened(reservation);
            } else if (req.method === 'DELETE') {
              const id = new URL(req.url, 'http://localhost').searchParams.get('operationId');
              if (id !== null) reservation.operations.delete(id);
            }
            return reservation.token;
          },
          async onSubscribe(req, params) {
            const reservation = reservationOf.get(req.raw);
            if (reservation) {
              // graphql-sse has checked the id (present, not running on this stream) and reserved it.
              const id = String(params.extensions?.operationId ?? '');
              operationIdOf.set(req.raw, { reservation, id });
              // Counted and taken in one synchronous step (no `await` between the check and the
              // `set` below), so simultaneous POSTs on one stream cannot overrun the cap (issue 20
              // item 3); the unopened-stream count of a PUT is likewise checked and raised at once.
              if (reservation.operations.size >= limits.maxOperationsPerStream) {
                return refuse(
                  req.raw,
                  429,
                  SSE_ERROR_CODES.tooManyOperations,
                  `At most ${limits.maxOperationsPerStream} operations per connection`,
                );
              }
              const slot: Slot = { started: false };
              reservation.operations.set(id, slot);
              slotOf.set(req.raw, { reservation, id, slot });
            }
            const refuseOperation = (errors: readonly GraphQLError[] | readonly unknown[]) => {
              freeSlot(slotOf.get(req.raw));
              return requestErrorResponse(errors);
            };
            let result: Awaited<ReturnType<typeof server.getResultForParams>>;
            let member: LiveMember | undefined;
            const serverContext = (serverContexts.get(req.raw) ?? {}) as LiveServerContext;
            const viewer = viewers.get(req.raw);
            if (options.live && viewer) {
              // A live subscription joins (or starts) a shared execution of the hub; its token's
              // expiry ends it there (the stream's own token ends it below).
              serverContext.live = { endsAtTokenExpiry: true };
              serverContext.viewer = viewer;
            }
            try {
              result = await server.getResultForParams(
                { params: { ...params }, request: req.raw },
                serverContext,
              );
              if (options.live?.owns(result)) member = result;
            } catch (error) {
              // Thrown before execution (persisted operations' refusals): the client's mistake.
              if (!(error instanceof GraphQLError)) {
                options.logger.error({ err: (error as Error).message }, 'graphql-sse operation failed');
              }
              return refuseOperation([error instanceof GraphQLError ? error : internalError()]);
            }
            // A result without `data` is a request error (parse, validation, context): answered as
            // /graphql answers it, not streamed (graphql-sse would take it for execution arguments).
            if (
              !member &&
              result &&
              !isAsyncIterable(result) &&
              !('data' in result) &&
              result.errors?.length
            ) {
              return refuseOperation(result.errors);
            }
            const taken = slotOf.get(req.raw);
            if (taken) taken.slot.started = true;
            if (member) {
              // The stream's token ends a member as the member's own token would: the hub's
              // `token-expired` result, counted alike on every road, then its end.
              const live = member;
              const stopWatching = reservation ? watchExpiry(reservation)(() => live.expire()) : undefined;
              return stoppable(live.results(), stopWatching);
            }
            if (!isAsyncIterable(result)) return result;
            return stoppable(
              reservation
                ? untilExpired(result, watchExpiry(reservation), () => ({ errors: [tokenExpiredError()] }))
                : result,
            );
          },
          onComplete(_ctx, req) {
            freeSlot(slotOf.get(req.raw));
          },
        },
        yoga.fetchAPI,
      );
    },
    onRequest({ request, url, endResponse, serverContext }) {
      if (url.pathname !== GRAPHQL_SSE_PATH || !handler) return;
      // A GET that may open a stream reaches graphql-sse with a signal of ours: aborting it ends the
      // stream through graphql-sse's own cleanup (as when the client goes away), which writes what
      // is queued, then ends the body, drops the stream and stops its operations.
      const ending =
        request.headers.get('accept') === 'text/event-stream' && streamTokenOf(request) !== null
          ? new AbortController()
          : undefined;
      return readJsonPost(request).then(async (text) => {
        const refused = text === undefined ? undefined : precheck(request, text);
        // graphql-sse reads the body the gateway read (a Request's body is read once).
        const handled =
          ending || text !== undefined
            ? new fetchAPI.Request(request.url, {
                method: request.method,
                headers: request.headers,
                signal: ending ? ending.signal : request.signal,
                ...(text !== undefined ? { body: text } : {}),
              })
            : request;
        serverContexts.set(handled, serverContext as Record<string, unknown>);
        if (refused) {
          requestRecordOf(serverContext as Record<string, unknown>)?.errorCodes.add(refused.code);
          const [body, init] = refusal(refused.status, refused.code, refused.message);
          endResponse(new fetchAPI.Response(body, init));
          return;
        }
        const answered = await handler!(handled);
        const { response, codes } = await typedRefusal(fetchAPI, answered, request.method);
        const refusedOperation = response.status >= 400 ? operationIdOf.get(handled) : undefined;
        if (refusedOperation) await forgetOperationId(refusedOperation.reservation, refusedOperation.id);
        for (const code of codes)
          requestRecordOf(serverContext as Record<string, unknown>)?.errorCodes.add(code);
        const reserved = reservedBy.get(handled);
        // graphql-sse did not reserve it (406: a PUT that does not accept text/plain).
        if (reserved && response.status !== 201) release(reserved);
        const opened = openedBy.get(handled);
        if (opened) {
          const { reservation } = opened;
          if (response.status === 200 && response.body && ending) {
            const endStream = () => ending.abort();
            reservation.endStream = endStream;
            const cancelExpiry = onTokenExpiry(opened.expiresAt, () => expireStream(reservation));
            endResponse(
              onStreamEnd(fetchAPI, response, request.signal, () => {
                cancelExpiry();
                release(reservation);
                endStream();
              }),
            );
            return;
          }
          release(reservation);
        }
        endResponse(response);
      });
    },
  };
}

/** The body of a `POST` with a JSON content type (what {@link precheck} reads), else undefined. */
async function readJsonPost(request: Request): Promise<string | undefined> {
  if (request.method !== 'POST') return undefined;
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' ? request.text() : undefined;
}

/**
 * What the gateway refuses of a `POST` itself, before graphql-sse reads it (graphql-sse's own words
 * for these would quote the body, or be matched as English): a JSON body that does not parse
 * (`BAD_REQUEST`, worded as `/graphql` words it), and an operation on a single-connection stream
 * without `extensions.operationId` (`operation-id-missing`). Anything else is graphql-sse's to read.
 */
function precheck(
  request: Request,
  text: string,
): { status: number; code: string; message: string } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { status: 400, code: SSE_ERROR_CODES.badRequest, message: 'POST body sent invalid JSON.' };
  }
  if (streamTokenOf(request) === null || typeof body !== 'object' || body === null) return undefined;
  const operationId = (body as { extensions?: { operationId?: unknown } }).extensions?.operationId;
  if (operationId === undefined || operationId === null || operationId === '') {
    return {
      status: 400,
      code: SSE_ERROR_CODES.operationIdMissing,
      message: 'An operation on a stream needs its id: send extensions.operationId',
    };
  }
  return undefined;
}

/** The single-connection stream token a request names (`X-GraphQL-Event-Stream-Token` or `?token=`), if any. */
function streamTokenOf(request: Request): string | null {
  return (
    request.headers.get('x-graphql-event-stream-token') ??
    new URL(request.url, 'http://localhost').searchParams.get('token')
  );
}

/**
 * `response` with a body that calls `onEnd` once when it ends: fully read, failed, cancelled, or its
 * request aborted (the client went away).
 */
function onStreamEnd(
  fetchAPI: { ReadableStream: typeof ReadableStream; Response: typeof Response },
  response: Response,
  signal: AbortSignal,
  onEnd: () => void,
): Response {
  const reader = response.body!.getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    signal.removeEventListener('abort', end);
    onEnd();
  };
  if (signal.aborted) end();
  else signal.addEventListener('abort', end, { once: true });
  const body = new fetchAPI.ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason);
    },
  });
  return new fetchAPI.Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * `source` as graphql-sse can stop it: graphql-sse returns an operation's iterator on `DELETE` and
 * when its stream ends only when it has `next`, `return` and `throw` (an async generator); Yoga's
 * subscription results (e.g. src/auth/token-expiry.ts's) have no `throw`, and would run on unseen.
 * `onDone` runs when the operation ends: done, returned, thrown into or disposed (possibly more than
 * once; it must be idempotent).
 */
function stoppable<T>(
  source: AsyncIterable<T>,
  onDone: () => void = () => {},
): AsyncGenerator<T, undefined, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  const done = (): IteratorResult<T, undefined> => ({ done: true, value: undefined });
  const generator: AsyncGenerator<T, undefined, undefined> = {
    async next() {
      const step = (await iterator.next()) as IteratorResult<T, undefined>;
      if (step.done) onDone();
      return step;
    },
    async return() {
      onDone();
      await iterator.return?.();
      return done();
    },
    async throw(error: unknown) {
      onDone();
      if (iterator.throw) return (await iterator.throw(error)) as IteratorResult<T, undefined>;
      await iterator.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return generator;
    },
    async [Symbol.asyncDispose]() {
      onDone();
      await iterator.return?.();
    },
  };
  return generator;
}
