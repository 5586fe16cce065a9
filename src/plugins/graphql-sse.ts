import { type ExecutionResult, GraphQLError } from 'graphql';
import {
  createHandler,
  type Request as GraphqlSseRequest,
  type Response as GraphqlSseResponse,
  type OperationResult,
  type RequestParams,
} from 'graphql-sse';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import { onTokenExpiry, tokenExpiredError, untilExpired } from '../auth/token-expiry.ts';
import type { Viewer } from '../auth/viewer.ts';
import type { Logger } from '../lib/logger.ts';
import { requestRecordOf } from '../lib/request-record.ts';
import {
  authRefusal,
  internalErrorAnswer,
  refusal,
  refusedOperation,
  SSE_ERROR_CODES,
  typedRefusal,
} from './graphql-sse-answers.ts';
import {
  type GraphQLSSELimits,
  type Reservation,
  type Slot,
  StreamReservations,
} from './graphql-sse-streams.ts';

export type { GraphQLSSELimits } from './graphql-sse-streams.ts';

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

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as AsyncIterable<unknown>)?.[Symbol.asyncIterator] === 'function';
}

/** Path of the graphql-sse endpoint (both modes of the graphql-sse protocol). */
export const GRAPHQL_SSE_PATH = '/graphql/stream';

/** An operation of a `POST` on a stream, run before graphql-sse reserves its id. */
interface StreamOperation {
  reservation: Reservation;
  id: string;
  slot: Slot;
  /** Yoga's result, which `onSubscribe` hands to graphql-sse. */
  result: Awaited<OperationResult>;
}

/**
 * What one request carries through graphql-sse's handler: its `req.context` (graphql-sse's "free to
 * pass any information here"), set by `authenticate` and read by the other hooks and once graphql-sse
 * has answered.
 */
interface RequestState {
  /** Yoga's server context of the HTTP request: the access line's record; passed to `getResultForParams`. */
  serverContext: Record<string, unknown>;
  /** The viewer `authenticate` accepted (the request's operations are not verified again). */
  viewer?: Viewer;
  /** The single-connection stream the request names, once its client is known to own it. */
  reservation?: Reservation;
  /** A `PUT`'s new stream, kept when graphql-sse answers 201. */
  reserved?: Reservation;
  /** This `GET` opens {@link reservation}: its event stream's end releases it. */
  opens?: boolean;
  /** A `POST`'s operation on {@link reservation}. */
  operation?: StreamOperation;
  /** The gateway's own request that drops an unopened {@link reservation} (no HTTP request). */
  dropping?: true;
}

/** graphql-sse's server-agnostic request as the plugin passes it: the Fetch request and its state. */
type StreamRequest = GraphqlSseRequest<Request | null, RequestState>;

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
 * operations (and let `PERSISTED_OPERATIONS=require` be bypassed). With `live`, a live subscription
 * then joins the shared execution of its operation (the live-subscription hub, src/live/hub.ts)
 * instead of running alone; a distinct-connections live subscription is served before this handler
 * by the lean path (src/server/graphql-http.ts), which hands anything else over to it.
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
 *   a slot is freed when its operation completes, is stopped (`DELETE`) or its stream ends; a
 *   refused operation's id may be sent again;
 * - an opened stream lives at most until the `exp` of the token its `GET` was opened with (`Viewer`
 *   `expiresAt`), as graphql-ws closes its socket with 4403 then: at that instant its running
 *   operations end with one last result carrying a `token-expired` error and a `complete` (also those
 *   started with a token that lives longer), and once they are written the event stream ends and the
 *   stream is released (any request naming it gets 404 `stream-not-found`). A `GET` with an expired
 *   token is refused like any request (401 `token-expired`).
 *
 * graphql-sse's own refusals (either mode) are answered the same way, by {@link typedRefusal}: a JSON
 * `errors` body with a code ({@link SSE_ERROR_CODES}), never a word of the client's input. A failure of
 * the gateway inside graphql-sse's handler (a hook that throws) is 500 `internal-error`.
 *
 * How it steers graphql-sse: through graphql-sse's server-agnostic handler (`createHandler` of
 * 'graphql-sse'), whose request carries the plugin's per-request state in `req.context` to every hook,
 * and whose `[body, init]` answer the plugin turns into Yoga's Fetch `Response` (as graphql-sse's own
 * fetch adapter does). graphql-sse reserves a `POST`'s operation id before `onSubscribe` and keeps it
 * when `onSubscribe` refuses, so a stream's operation is checked and run in `authenticate`, before
 * graphql-sse sees its id; `onSubscribe` hands over the result. The gateway's table of a stream's ids
 * is kept a superset of graphql-sse's (taken first, given back after graphql-sse's), so graphql-sse
 * never refuses an operation the gateway has run.
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
  const { limits, logger } = options;
  const streams = new StreamReservations(limits, (reservation) => {
    drop(reservation).catch((error: unknown) =>
      logger.error({ err: (error as Error).message }, 'graphql-sse reservation not dropped'),
    );
  });
  let server: YogaServerInstance<Record<string, unknown>, Record<string, unknown>>;

  /** A refusal of {@link refusal}, its code also in the request's access line. */
  const refuse = (state: RequestState, status: number, code: string, message: string) => {
    requestRecordOf(state.serverContext)?.errorCodes.add(code);
    return refusal(status, code, message);
  };

  /**
   * Runs an operation through Yoga's pipeline with the request's viewer: its result (a stream's
   * subscription ends with the stream's token, and is made stoppable for graphql-sse), or the
   * answer of its refusal.
   */
  const run = async (
    req: StreamRequest,
    params: RequestParams,
    reservation?: Reservation,
  ): Promise<{ result: StreamOperation['result'] } | { refused: GraphqlSseResponse }> => {
    const serverContext = req.context.serverContext as LiveServerContext;
    const viewer = req.context.viewer;
    if (options.live && viewer) {
      // A live subscription joins (or starts) a shared execution of the hub; its token's
      // expiry ends it there (the stream's own token ends it below).
      serverContext.live = { endsAtTokenExpiry: true };
      serverContext.viewer = viewer;
    }
    let result: unknown;
    try {
      if (!req.raw) throw new Error('graphql-sse operation without its HTTP request');
      result = await server.getResultForParams({ params: { ...params }, request: req.raw }, serverContext);
    } catch (error) {
      // Thrown before execution (persisted operations' refusals): the client's mistake.
      return { refused: refusedOperation({ thrown: error }, logger) };
    }
    if (options.live?.owns(result)) {
      // The stream's token ends a member as the member's own token would: the hub's
      // `token-expired` result, counted alike on every road, then its end.
      const member = result;
      const stopWatching = reservation ? streams.watchExpiry(reservation)(() => member.expire()) : undefined;
      return { result: stoppable(member.results(), stopWatching) as Awaited<OperationResult> };
    }
    if (!isAsyncIterable(result)) {
      // A result without `data` is a request error (parse, validation, context): answered as
      // /graphql answers it, not streamed (graphql-sse would take it for execution arguments).
      const executed = result as ExecutionResult | undefined;
      if (executed && !('data' in executed) && executed.errors?.length) {
        return { refused: refusedOperation({ errors: executed.errors }, logger) };
      }
      return { result: executed as Awaited<OperationResult> };
    }
    const stream = reservation
      ? untilExpired(result, streams.watchExpiry(reservation), () => ({ errors: [tokenExpiredError()] }))
      : result;
    return { result: stoppable(stream) as Awaited<OperationResult> };
  };

  /** A `PUT`: a new stream of the server's token, within the client's unopened streams. */
  const reserve = (state: RequestState, principal: string) => {
    const reservation = streams.reserve(principal);
    if (!reservation) {
      return refuse(
        state,
        429,
        SSE_ERROR_CODES.tooManyUnopenedStreams,
        `At most ${limits.maxUnopenedStreamsPerClient} unopened streams per client: open (GET) a reserved stream first`,
      );
    }
    state.reserved = reservation;
    return reservation.token;
  };

  /**
   * A `POST` on a stream, checked and run before graphql-sse reserves its operation id: graphql-sse
   * keeps an id it reserved when `onSubscribe` refuses the operation, and has no public way to give it
   * back, so every refusal of the gateway (id in use, the operation cap, Yoga's refusals) is answered
   * here, while graphql-sse has not seen the id. What graphql-sse refuses before it reserves an id
   * (an `Accept` it does not answer, parameters it cannot read) is left to it: nothing has run.
   * @returns the refusal, or the stream's token (the operation waits in `req.context`).
   */
  const prepare = async (req: StreamRequest, reservation: Reservation, body: unknown) => {
    if (typeof body !== 'object' || body === null) return reservation.token;
    const id = String((body as { extensions?: { operationId?: unknown } }).extensions?.operationId ?? '');
    if (!id) {
      return refuse(
        req.context,
        400,
        SSE_ERROR_CODES.operationIdMissing,
        'An operation on a stream needs its id: send extensions.operationId',
      );
    }
    const params = graphqlSseParams(body);
    if (!params || !acceptsJson(req.headers.get('accept'))) return reservation.token;
    const slot = streams.take(reservation, id);
    if (slot === 'in-use') {
      return refuse(
        req.context,
        409,
        SSE_ERROR_CODES.operationIdInUse,
        'An operation with this id runs on this stream already',
      );
    }
    if (slot === 'full') {
      return refuse(
        req.context,
        429,
        SSE_ERROR_CODES.tooManyOperations,
        `At most ${limits.maxOperationsPerStream} operations per connection`,
      );
    }
    const ran = await run(req, params, reservation);
    if ('refused' in ran) {
      streams.free(reservation, id, slot);
      return ran.refused;
    }
    req.context.operation = { reservation, id, slot, result: ran.result };
    return reservation.token;
  };

  /**
   * graphql-sse's `authenticate`: the token check, then the stream the request names (its
   * reservation for a `PUT`), and a stream operation's run ({@link prepare}).
   * @returns graphql-sse's stream token (`null`: distinct connections), or the refusal.
   */
  const authenticate = async (req: StreamRequest) => {
    const state = req.context;
    if (state.dropping) return state.reservation!.token;
    let viewer: Viewer;
    try {
      viewer = await options.authenticate(req.headers.get('authorization') ?? null);
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error;
      return authRefusal(error);
    }
    state.viewer = viewer;
    let body: unknown;
    if (typeof req.body === 'string') {
      try {
        body = JSON.parse(req.body);
      } catch {
        // graphql-sse's own words for it would quote the body: worded as /graphql words it.
        return refuse(state, 400, SSE_ERROR_CODES.badRequest, 'POST body sent invalid JSON.');
      }
    }
    const principal = principalOf(viewer);
    if (req.method === 'PUT') return reserve(state, principal);
    const token = streamTokenOf(req);
    const eventStream = req.headers.get('accept') === 'text/event-stream';
    // Distinct connections mode: no token, one stream per request.
    if (token === null && eventStream) return null;
    const reservation = streams.find(token, principal);
    if (!reservation) {
      return refuse(
        state,
        404,
        SSE_ERROR_CODES.streamNotFound,
        token === null
          ? 'Send the token of a reserved (PUT) stream in X-GraphQL-Event-Stream-Token'
          : 'No stream of this client has this token (expired, closed or never reserved)',
      );
    }
    state.reservation = reservation;
    if (eventStream) {
      // Opens the stream (graphql-sse answers 409 when it is open already).
      state.opens = !reservation.opened;
      streams.open(reservation);
    } else if (req.method === 'POST' && body !== undefined) {
      return prepare(req, reservation, body);
    }
    return reservation.token;
  };

  const handler = createHandler<Request | null, RequestState>({
    authenticate,
    async onSubscribe(req, params) {
      const operation = req.context.operation;
      if (operation) {
        operation.slot.started = true;
        return operation.result;
      }
      const ran = await run(req, params);
      return 'refused' in ran ? ran.refused : ran.result;
    },
    // Synchronous: graphql-sse deletes the id one microtask after this returns, before any request
    // that finds it free here reaches graphql-sse's own check.
    onComplete(_ctx, req) {
      const operation = req.context.operation;
      if (operation) streams.free(operation.reservation, operation.id, operation.slot);
    },
  });

  /**
   * Drops a reservation that was not opened in time, with the operations started on it.
   * graphql-sse keeps its streams inside its handler and drops one only when an event stream
   * subscribed to it ends; it has no other public way, and an unopened stream keeps its operations
   * running and queues their results. So the gateway asks the handler to open it, with a request of
   * its own (no HTTP request: `context.dropping`, which `authenticate` answers with the token), and
   * ends that event stream at once: graphql-sse deletes the stream and stops its operations.
   */
  const drop = async (reservation: Reservation) => {
    if (reservation.opened) return;
    streams.release(reservation);
    const [body] = await handler({
      method: 'GET',
      url: GRAPHQL_SSE_PATH,
      headers: { get: (name) => (name === 'accept' ? 'text/event-stream' : null) },
      body: null,
      raw: null,
      context: { serverContext: {}, reservation, dropping: true },
    });
    if (body !== null && typeof body !== 'string') await body.return(undefined);
  };

  /** graphql-sse's answer as Yoga's Fetch `Response`, once the request's state is settled. */
  const respond = (request: Request, state: RequestState, answered: GraphqlSseResponse): Response => {
    const [body, init] = answered;
    const { reservation, operation, reserved } = state;
    // graphql-sse did not reserve it (406: a PUT that does not accept text/plain).
    if (reserved && init.status !== 201) streams.release(reserved);
    if (operation && init.status !== 202) {
      // graphql-sse did not take the operation (its stream went meanwhile): stopped, id given back.
      streams.free(operation.reservation, operation.id, operation.slot);
      const result = operation.result as Partial<AsyncGenerator>;
      result.return?.(undefined).catch(() => {});
    }
    if (request.method === 'DELETE' && reservation && init.status === 200) {
      // graphql-sse has deleted the id (and stopped its operation): the gateway gives it back now.
      const id = new URL(request.url, 'http://localhost').searchParams.get('operationId');
      if (id !== null) streams.free(reservation, id);
    }
    if (body !== null && typeof body !== 'string') {
      if (!state.opens || !reservation) return streamResponse(request, body, init, () => {});
      reservation.endStream = () => void body.return(undefined);
      const cancelExpiry = onTokenExpiry(state.viewer!.expiresAt, () => streams.expire(reservation));
      return streamResponse(request, body, init, () => {
        cancelExpiry();
        streams.release(reservation);
      });
    }
    if (state.opens && reservation) streams.release(reservation);
    const typed = typedRefusal([body, init], request.method);
    for (const code of typed.codes) requestRecordOf(state.serverContext)?.errorCodes.add(code);
    return new server.fetchAPI.Response(typed.answer[0], typed.answer[1]);
  };

  /**
   * `body` as a Fetch response body, as graphql-sse's fetch adapter makes it: ended (graphql-sse's
   * cleanup: what is queued is written, then the stream is dropped and its operations stopped) when
   * read to its end, cancelled or its request aborted (the client went away); `onEnd` then, once.
   */
  const streamResponse = (
    request: Request,
    body: AsyncGenerator<string, void, undefined>,
    init: GraphqlSseResponse[1],
    onEnd: () => void,
  ): Response => {
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      request.signal.removeEventListener('abort', end);
      onEnd();
      body.return(undefined).catch((error: unknown) => {
        logger.error({ err: (error as Error)?.message }, 'graphql-sse stream not ended');
      });
    };
    if (request.signal.aborted) end();
    else request.signal.addEventListener('abort', end, { once: true });
    const encoder = new TextEncoder();
    const stream = new server.fetchAPI.ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await body.next();
          if (value != null) controller.enqueue(encoder.encode(value));
          if (done) {
            end();
            controller.close();
          }
        } catch (error) {
          logger.error({ err: (error as Error)?.message }, 'graphql-sse stream failed');
          end();
          controller.error(error);
        }
      },
      cancel: end,
    });
    return new server.fetchAPI.Response(stream, init);
  };

  /** A request to `/graphql/stream` through graphql-sse's handler; a failure inside it is 500 `internal-error`. */
  const answer = async (request: Request, serverContext: Record<string, unknown>): Promise<Response> => {
    const state: RequestState = { serverContext };
    let answered: GraphqlSseResponse;
    try {
      // graphql-sse reads a JSON POST's body from `body`: the gateway reads it first, once.
      const json =
        request.method === 'POST' && (request.headers.get('content-type') ?? '').includes('application/json');
      answered = await handler({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: json ? await request.text() : null,
        raw: request,
        context: state,
      });
    } catch (error) {
      // A client gone mid-body is not a gateway failure (its answer is not read).
      if (!request.signal.aborted)
        logger.error({ err: (error as Error)?.message }, 'graphql-sse request failed');
      answered = internalErrorAnswer();
    }
    return respond(request, state, answered);
  };

  return {
    onYogaInit({ yoga }) {
      server = yoga as unknown as typeof server;
    },
    onRequest({ request, url, endResponse, serverContext }) {
      if (url.pathname !== GRAPHQL_SSE_PATH) return;
      return answer(request, serverContext as Record<string, unknown>).then(endResponse);
    },
  };
}

/**
 * graphql-sse's reading of a JSON body as GraphQL parameters (its `parseReq`): an object whose
 * `query` is a string and whose `variables` and `extensions` are objects when present; undefined when
 * graphql-sse would refuse it (400, before it reserves an operation id).
 */
function graphqlSseParams(body: unknown): RequestParams | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { query, operationName, variables, extensions } = body as Record<string, unknown>;
  const isObject = (value: unknown) => typeof value === 'object' && !Array.isArray(value);
  if (typeof query !== 'string') return undefined;
  if (variables != null && !isObject(variables)) return undefined;
  if (extensions != null && !isObject(extensions)) return undefined;
  return { query, operationName, variables, extensions } as RequestParams;
}

/** Whether graphql-sse answers a stream `POST` with this `Accept` (it answers 406 otherwise). */
function acceptsJson(accept: string | null | undefined): boolean {
  return ['*/*', 'application/*', 'application/json'].includes(accept || '*/*');
}

/** The single-connection stream token a request names (`X-GraphQL-Event-Stream-Token` or `?token=`), if any. */
function streamTokenOf(req: Pick<StreamRequest, 'headers' | 'url'>): string | null {
  return (
    req.headers.get('x-graphql-event-stream-token') ??
    new URL(req.url, 'http://localhost').searchParams.get('token')
  );
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
