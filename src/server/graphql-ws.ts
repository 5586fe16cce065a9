import type { IncomingMessage, Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  buildSchema,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLFormattedError,
  parse,
} from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { type WebSocket, WebSocketServer } from 'ws';
import { onTokenExpiry } from '../auth/token-expiry.ts';
import type { Viewer } from '../auth/viewer.ts';
import type { Config } from '../config/index.ts';
import type { Logger } from '../lib/logger.ts';
import { redactPans } from '../lib/pan.ts';
import { redactExecutionResult, redactGraphQLError } from '../lib/redaction.ts';
import {
  createRequestRecord,
  errorCodeOf,
  REQUEST_ID_HEADER,
  type RequestRecord,
} from '../lib/request-record.ts';
import { guardedWebSocketClass, SLOW_CONSUMER_CLOSE_CODE } from '../lib/ws-sends.ts';
import type { LiveHub, LiveServerContext, LiveSubscription } from '../live/hub.ts';
import { withRequestId } from '../plugins/request-id.ts';
import type { GraphQLRuntime } from '../runtime/index.ts';
import { writeAccessLine } from './access-line.ts';
import { type GraphqlWsSockets, serveGraphqlWsSockets } from './graphql-ws-sockets.ts';

/** What graphql-ws keeps per socket for us (`ctx.extra`, besides its `socket` and `request`). */
type WsExtra = {
  viewer?: Viewer | null;
  /**
   * Ids of the socket's operations, taken synchronously when a `subscribe` message arrives (before
   * the first `await`), freed on complete or refusal: the per-socket cap's count.
   */
  operations?: Set<string>;
  cancelExpiry?: () => void;
  record?: RequestRecord;
};

/** graphql-ws's hook context of one socket, with our {@link WsExtra}. */
type WsContext = Parameters<
  NonNullable<ServerOptions<Record<string, unknown> | undefined, WsExtra>['onConnect']>
>[0] & {
  extra: WsExtra & { socket: WebSocket };
};

/** graphql-ws's `subscribe` message payload. */
type SubscribePayload = Parameters<NonNullable<ServerOptions['onSubscribe']>>[2];

/** Options of {@link GraphqlWsServer}. */
export interface GraphqlWsServerOptions {
  server: Server;
  runtime: GraphQLRuntime;
  limits: Config['websocket'];
  logger: Logger;
  /** The live-subscription hub the runtime's Yoga serves live subscriptions with (src/live/hub.ts). */
  hub: LiveHub;
}

/**
 * graphql-ws on the gateway's HTTP server (`/graphql`). Disposing it is graphql-ws's own dispose:
 * every socket closes with 1001, then the WebSocket server. The client token comes in
 * `connectionParams.authorization` and is checked at `connection_init`: a missing or invalid token
 * closes the socket with 4403, and so does the token's expiry later on (src/auth/token-expiry.ts, the
 * same instant SSE streams end). A socket holds at most `limits.maxSubscriptionsPerSocket`
 * operations: a `subscribe` takes its place before anything is awaited, so subscribe messages
 * pipelined on one socket cannot overrun the cap (issue 20 item 3); one past it fails with an `error`
 * message coded `too-many-subscriptions`. Every operation turns into GraphQL params and the
 * connection's viewer and runs through Yoga's public `getResultForParams`, as on every other road, so
 * plugins (persisted operations, limits, redaction) apply alike.
 * A bad operation (syntax error, validation error, limit breach, refused context, failed execution)
 * fails only itself with an `error` message; the socket and its other subscriptions stay open.
 * Every error, result and close reason leaves through the redaction of src/lib/redaction.ts.
 *
 * Live subscriptions that are identical for their viewers share one execution of the
 * live-subscription hub (src/live/hub.ts, which also keeps each member's request id, access line and
 * metrics); here only its framing (one `next` message per event, the payload serialized once for
 * every member) and back-pressure (src/lib/ws-sends.ts) remain.
 */
export class GraphqlWsServer implements AsyncDisposable {
  readonly #runtime: GraphQLRuntime;
  readonly #limits: Config['websocket'];
  readonly #logger: Logger;
  readonly #hub: LiveHub;
  readonly #wsServer: WebSocketServer;
  /** Close and error listeners of every socket (see {@link socketListeners}). */
  readonly #listeners: ReturnType<typeof socketListeners>;
  /** graphql-ws on the sockets (src/server/graphql-ws-sockets.ts); disposing closes them with 1001. */
  readonly #server: GraphqlWsSockets;

  constructor(options: GraphqlWsServerOptions) {
    this.#runtime = options.runtime;
    this.#limits = options.limits;
    this.#logger = options.logger;
    this.#hub = options.hub;
    const logger = this.#logger;
    this.#listeners = socketListeners(logger);
    this.#wsServer = new WebSocketServer({
      server: options.server,
      path: '/graphql',
      maxPayload: this.#limits.maxPayloadBytes,
      // Sends guarded (back-pressure) and close reasons
      // redacted (graphql-ws puts error messages in them) on the prototype, not per socket.
      WebSocket: guardedWebSocketClass(
        this.#limits.maxBufferedBytes,
        (socket) =>
          logger.warn(
            { code: SLOW_CONSUMER_CLOSE_CODE, bufferedBytes: socket.bufferedAmount },
            'graphql-ws slow consumer closed: too much unsent data',
          ),
        redactPans,
      ),
    });
    this.#server = serveGraphqlWsSockets<Record<string, unknown> | undefined, WsExtra>(
      this.#wsServer,
      {
        onConnect: (ctx) => this.#onConnect(ctx as WsContext),
        onClose: (ctx) => ctx.extra.cancelExpiry?.(),
        // The result was made in onSubscribe (Yoga's getResultForParams): graphql-ws only sends it.
        execute: (args) => (args.rootValue as OperationRoot).result as ExecutionResult,
        subscribe: (args) =>
          (args.rootValue as OperationRoot).result as AsyncIterableIterator<ExecutionResult>,
        onSubscribe: (ctx, id, payload) => this.#onSubscribe(ctx as WsContext, id, payload),
        onNext: (_ctx, _id, _payload, _args, result) => {
          const redacted = redactExecutionResult(result);
          return redacted === result ? undefined : redacted;
        },
        onComplete: (ctx, id) => {
          ctx.extra.operations?.delete(id);
        },
        onError: (ctx, id, _payload, errors) => this.#onError(ctx as WsContext, id, errors),
      },
      { connectionInitTimeoutMs: this.#limits.connectionInitTimeoutMs, logger: this.#logger },
    );
    this.#wsServer.on('connection', (socket, request) => this.#onSocket(socket, request));
  }

  /** Closes every socket with 1001, then the WebSocket server (graphql-ws's dispose). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#server.dispose();
  }

  /**
   * `connection_init`: the viewer of `connectionParams.authorization` (false, closing 4403, without
   * one), the socket's operation set and its token-expiry timer.
   */
  async #onConnect(ctx: WsContext): Promise<boolean> {
    this.#server.initialised(ctx.extra.socket);
    const record = (ctx.extra.socket as ConnectionSocket)[CONNECTION]?.record;
    if (record) ctx.extra.record = record;
    const viewer = await this.#runtime.viewerAuth.fromConnectionParams(ctx.connectionParams);
    if (!viewer) return false;
    ctx.extra.viewer = viewer;
    ctx.extra.operations = new Set();
    // The same timer ends SSE streams (src/plugins/token-expiry.ts) at the same instant.
    ctx.extra.cancelExpiry = onTokenExpiry(viewer.expiresAt, () =>
      ctx.extra.socket.close(4403, 'Forbidden: token expired'),
    );
    // The upgrade request (headers, raw headers, stream state) and the connection_init payload
    // (the client token's text) are not read after this: not holding them for the connection's
    // life saves more than a kilobyte per idle subscriber. Set to undefined rather than deleted, so
    // the objects keep their shape (a deleted property turns an object into a dictionary).
    (ctx.extra as { request?: unknown }).request = undefined;
    (ctx as { connectionParams?: unknown }).connectionParams = undefined;
    return true;
  }

  /**
   * `subscribe`: takes the operation's place on the socket at once (the cap is counted before the
   * first `await`, issue 20 item 3), then runs the operation through Yoga's public
   * `getResultForParams` with the connection's viewer: every `onParams` plugin (persisted
   * operations), then the live-subscription hub (src/live/hub.ts) for a live subscription, or
   * Yoga's own parse, validation, context and execution. A refusal (a thrown GraphQL error, or a
   * result without `data`) gives the place back and fails this operation only.
   * @returns execution arguments whose `rootValue` carries the result, or the GraphQL errors of the
   *   refusal (redacted, with request id).
   */
  async #onSubscribe(
    ctx: WsContext,
    id: string,
    payload: SubscribePayload,
  ): Promise<ExecutionArgs | readonly GraphQLError[]> {
    const operations = ctx.extra.operations!;
    const max = this.#limits.maxSubscriptionsPerSocket;
    if (operations.size >= max) {
      return [
        new GraphQLError(`At most ${max} operations per connection`, {
          extensions: { code: 'too-many-subscriptions' },
        }),
      ];
    }
    // Counted now: a subscribe message handled while this one awaits sees its place taken.
    operations.add(id);
    // A bad operation fails alone (an `error` message); the socket and its siblings stay.
    const refuse = (errors: readonly GraphQLError[]) => {
      operations.delete(id);
      const redacted = errors.map(redactGraphQLError);
      const requestId = ctx.extra.record?.id;
      return requestId ? (withRequestId({ errors: redacted }, requestId).errors as GraphQLError[]) : redacted;
    };
    const params = {
      query: payload.query,
      ...(payload.operationName ? { operationName: payload.operationName } : {}),
      ...(payload.variables ? { variables: payload.variables } : {}),
      ...(payload.extensions ? { extensions: payload.extensions } : {}),
    };
    const serverContext: LiveServerContext = {
      viewer: ctx.extra.viewer ?? null,
      ...(ctx.extra.record ? { requestRecord: ctx.extra.record } : {}),
      // The socket closes at the token's expiry (4403): members need no expiry of their own.
      live: { endsAtTokenExpiry: false },
    };
    let result: unknown;
    try {
      // No HTTP request: the connection was authenticated at connection_init.
      result = await this.#runtime.yoga.getResultForParams(
        { params, request: undefined as unknown as Request },
        serverContext as never,
      );
    } catch (error) {
      if (error instanceof GraphQLError) return refuse([error]);
      operations.delete(id);
      return this.#unexpected(error, id);
    }
    if (this.#hub.owns(result)) {
      return operationArgs(SUBSCRIPTION, liveIterator(result, ctx.extra.socket, id));
    }
    if (isAsyncIterable(result)) return operationArgs(SUBSCRIPTION, result);
    const single = result as ExecutionResult;
    // Refused before it ran (request errors: no field path): an `error` message, as graphql-ws
    // answers those. Errors of the execution itself (a resolver refusing the subscription: its
    // field's path) stay a result (`next`), as on the SSE roads.
    if (!('data' in single) && single.errors?.length && single.errors.every(isRefusal)) {
      return refuse(single.errors);
    }
    return operationArgs(QUERY, single);
  }

  /**
   * An `error` message of operation `id`: its place on the socket is free again (graphql-ws calls no
   * `onComplete` after a refusal), its codes go to the access line, and it leaves redacted.
   */
  #onError(ctx: WsContext, id: string, errors: readonly GraphQLError[]): GraphQLFormattedError[] {
    ctx.extra.operations?.delete(id);
    // A client mistake: codes only (messages quote the client's document), and the access line
    // of the connection carries them too.
    const codes = errors.map((error) => errorCodeOf(error, 'GRAPHQL_VALIDATION_FAILED'));
    for (const code of codes) ctx.extra.record?.errorCodes.add(code);
    this.#logger.info({ reqId: ctx.extra.record?.id, errorCodes: codes }, 'graphql-ws operation refused');
    return errors.map((error) => toWsError(redactGraphQLError(error)));
  }

  /** A failure of our own code while preparing an operation: logged, answered as Yoga masks it. */
  #unexpected(error: unknown, id: string): GraphQLError[] {
    this.#logger.error({ err: error, operationId: id }, 'graphql-ws operation could not be prepared');
    return [new GraphQLError('Unexpected error.', { extensions: { code: 'internal-error' } })];
  }

  /**
   * A new socket: its request record and access line (one request per connection, written when it
   * closes), and socket errors logged as one line
   * (graphql-ws prints them to the console, e.g. a client exceeding maxPayload, which ws answers with
   * 1009) with the socket closed as graphql-ws would.
   */
  #onSocket(socket: WebSocket, request: IncomingMessage): void {
    const connection = socket as ConnectionSocket;
    connection[CONNECTION] = {
      record: createRequestRecord(request.headers[REQUEST_ID_HEADER], 'graphql-ws'),
      startedAt: performance.now(),
    };
    // Listeners shared by every socket (state on the socket): no closures per idle subscriber.
    connection.on('close', this.#listeners.close);
    connection.removeAllListeners('error');
    connection.on('error', this.#listeners.error);
  }
}

/** A socket's access-log state, kept on the socket (its upgrade's record and start time). */
const CONNECTION = Symbol('cardgraph.graphqlWs.connection');
type ConnectionSocket = WebSocket & {
  [CONNECTION]?: { record: RequestRecord; startedAt: number };
};

/**
 * The close and error listeners every socket shares (`this` is the socket): the access line when it
 * closes (one request per connection), and a socket error logged as one line (graphql-ws prints
 * them to the console, e.g. a client exceeding maxPayload, which ws answers with 1009) with the
 * socket closed as graphql-ws would.
 */
function socketListeners(logger: Logger) {
  return {
    close(this: ConnectionSocket, code: number): void {
      const state = this[CONNECTION];
      if (!state) return;
      writeAccessLine(logger, {
        record: state.record,
        method: 'GET',
        route: '/graphql',
        status: 101,
        durationMs: performance.now() - state.startedAt,
        closeCode: code,
      });
    },
    error(this: ConnectionSocket, error: Error): void {
      logger.warn({ err: error.message }, 'graphql-ws socket error');
      if (this.readyState === this.OPEN) this.close(1011, 'Internal Error');
    },
  };
}

/**
 * Starts graphql-ws on `options.server` ({@link GraphqlWsServer}).
 * @returns its disposable: closes every socket with 1001, then the WebSocket server.
 */
export function serveGraphqlWs(options: GraphqlWsServerOptions): GraphqlWsServer {
  return new GraphqlWsServer(options);
}

/**
 * A GraphQL error as graphql-ws sends it: without Yoga's `http` extension (status and headers of the
 * HTTP transport), as Yoga leaves it out of HTTP bodies too.
 */
function toWsError(error: GraphQLError): GraphQLFormattedError {
  const { http: _http, ...extensions } = error.extensions;
  const json = error.toJSON();
  if (Object.keys(extensions).length > 0) return { ...json, extensions };
  const { extensions: _all, ...rest } = json;
  return rest;
}

/**
 * Whether `error` refused the operation before it ran: a request error in GraphQL's sense, which has
 * no field `path` (syntax, validation, limits, persisted operations, variables, a refused context);
 * an error of the execution itself names the field that raised it.
 */
function isRefusal(error: GraphQLError): boolean {
  return error.path === undefined || error.path.length === 0;
}

/** What onSubscribe hands graphql-ws's execute/subscribe: the operation's result, made already. */
type OperationRoot = { result: ExecutionResult | AsyncIterable<ExecutionResult> };

/** Documents graphql-ws reads the operation type from (it calls subscribe or execute by it). */
const SUBSCRIPTION = parse('subscription { __typename }');
const QUERY = parse('{ __typename }');
/** The schema of graphql-ws's execution arguments: not read, the result is made already. */
const PLACEHOLDER_SCHEMA = buildSchema('type Query { _: Boolean } type Subscription { _: Boolean }');

/** graphql-ws execution arguments carrying a result made by Yoga (see {@link OperationRoot}). */
function operationArgs(
  document: DocumentNode,
  result: ExecutionResult | AsyncIterable<ExecutionResult>,
): ExecutionArgs {
  return { schema: PLACEHOLDER_SCHEMA, document, rootValue: { result } satisfies OperationRoot };
}

/**
 * A live member (src/live/hub.ts) as graphql-ws iterates it: each event is written to the socket as
 * graphql-ws would (`{"id":…,"type":"next","payload":…}`, the payload serialized once for every
 * member, through the guarded send and its back-pressure) and the iterator yields none; it ends
 * when the member does (graphql-ws then sends `complete`), rejects when it fails (`error`), and its
 * `return()` (the client's `complete`, the socket's close) leaves the execution.
 */
function liveIterator(
  subscription: LiveSubscription,
  socket: WebSocket,
  id: string,
): AsyncGenerator<ExecutionResult, undefined, undefined> {
  const head = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
  const done: IteratorResult<ExecutionResult, undefined> = { value: undefined, done: true };
  type Step = IteratorResult<ExecutionResult, undefined>;
  let settle: { resolve: (step: Step) => void; reject: (error: unknown) => void } | undefined;
  const ended = new Promise<Step>((resolve, reject) => {
    settle = { resolve, reject };
  });
  subscription.attach({
    next(event) {
      if (socket.readyState === socket.OPEN) socket.send(`${head}${event.json}}`);
    },
    end(failure) {
      if (failure === undefined) settle!.resolve(done);
      else settle!.reject(failure);
    },
  });
  const iterator: AsyncGenerator<ExecutionResult, undefined, undefined> = {
    next: () => ended,
    return() {
      subscription.close();
      settle!.resolve(done);
      return Promise.resolve(done);
    },
    throw(error: unknown) {
      subscription.close();
      settle!.resolve(done);
      return Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
    async [Symbol.asyncDispose]() {
      subscription.close();
      settle!.resolve(done);
    },
  };
  return iterator;
}

function isAsyncIterable<T>(
  value: T | AsyncIterable<ExecutionResult>,
): value is AsyncIterable<ExecutionResult> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
