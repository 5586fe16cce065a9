import type { IncomingMessage, Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { type ExecutionArgs, type ExecutionResult, GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { ServerOptions } from 'graphql-ws';
import { type WebSocket, WebSocketServer } from 'ws';
import { onTokenExpiry } from '../auth/token-expiry.ts';
import type { Viewer } from '../auth/viewer.ts';
import type { Config } from '../config/index.ts';
import { sharedSubscriberCount } from '../events/card-event-bus.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { redactPans } from '../lib/pan.ts';
import { redactExecutionResult, redactGraphQLError } from '../lib/redaction.ts';
import {
  createRequestRecord,
  errorCodeOf,
  REQUEST_ID_HEADER,
  type RequestRecord,
  requestRecordOf,
} from '../lib/request-record.ts';
import {
  guardedWebSocketClass,
  SLOW_CONSUMER_CLOSE_CODE,
  serializedPayload,
  sharedPayloadReplacer,
} from '../lib/ws-sends.ts';
import { withRequestId } from '../plugins/request-id.ts';
import type { GraphQLRuntime } from '../runtime/index.ts';
import { writeAccessLine } from './access-line.ts';
import { isShareable, SharedSubscriptions, shareKeyOf } from './graphql-ws-sharing.ts';
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
  /** Counts the members of shared executions the plugins do not see (see {@link GraphqlWsServer}). */
  metrics?: Metrics;
}

/**
 * graphql-ws on the gateway's HTTP server (`/graphql`). Disposing it is graphql-ws's own dispose:
 * every socket closes with 1001, then the WebSocket server. The client token comes in
 * `connectionParams.authorization` and is checked at `connection_init`: a missing or invalid token
 * closes the socket with 4403, and so does the token's expiry later on (src/auth/token-expiry.ts, the
 * same instant SSE streams end). A socket holds at most `limits.maxSubscriptionsPerSocket`
 * operations: a `subscribe` takes its place before anything is awaited, so subscribe messages
 * pipelined on one socket cannot overrun the cap (issue 20 item 3); one past it fails with an `error`
 * message coded `too-many-subscriptions`. Execution goes through Yoga's envelop so plugins (limits,
 * redaction) apply alike.
 * A bad operation (syntax error, validation error, limit breach, refused context, failed execution)
 * fails only itself with an `error` message; the socket and its other subscriptions stay open.
 * Every error, result and close reason leaves through the redaction of src/lib/redaction.ts.
 *
 * Live subscriptions that are identical for their viewers share one execution
 * (src/server/graphql-ws-sharing.ts): the first goes through the whole pipeline, later ones are
 * checked (persisted operations, operation count) and join it without a context of their own. Each
 * member keeps its own request id on errors, its access-log line and its count in `metrics`
 * (`cardgraph_graphql_operations_total`, live subscriptions); errors of a shared result are counted
 * once per event.
 */
export class GraphqlWsServer implements AsyncDisposable {
  readonly #runtime: GraphQLRuntime;
  readonly #limits: Config['websocket'];
  readonly #logger: Logger;
  readonly #metrics: Metrics | undefined;
  readonly #sharing = new SharedSubscriptions();
  readonly #wsServer: WebSocketServer;
  /** Close and error listeners of every socket (see {@link socketListeners}). */
  readonly #listeners: ReturnType<typeof socketListeners>;
  /** A shared result's redacted form, made once per result (see {@link GraphqlWsServer.#redactOnce}). */
  readonly #redactedResults = new WeakMap<object, ReturnType<typeof redactExecutionResult>>();
  /** graphql-ws on the sockets (src/server/graphql-ws-sockets.ts); disposing closes them with 1001. */
  readonly #server: GraphqlWsSockets;

  constructor(options: GraphqlWsServerOptions) {
    this.#runtime = options.runtime;
    this.#limits = options.limits;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    const logger = this.#logger;
    this.#listeners = socketListeners(logger);
    this.#wsServer = new WebSocketServer({
      server: options.server,
      path: '/graphql',
      maxPayload: this.#limits.maxPayloadBytes,
      // Sends guarded (one serialization per shared result, back-pressure) and close reasons
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
        // One serialization per shared result (see guardedWebSocketClass).
        jsonMessageReplacer: sharedPayloadReplacer,
        onConnect: (ctx) => this.#onConnect(ctx as WsContext),
        onClose: (ctx) => ctx.extra.cancelExpiry?.(),
        execute: (args) => runSafely(() => (args.rootValue as EnvelopedRoot).execute!(args)),
        subscribe: (args) => runSafely(() => this.#subscribeShared(args)),
        onSubscribe: (ctx, id, payload) => this.#onSubscribe(ctx as WsContext, id, payload),
        onNext: (_ctx, _id, _payload, _args, result) => {
          const redacted = this.#redactOnce(result);
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
   * first `await`, issue 20 item 3), then resolves persisted operations, joins a running shared
   * execution or parses, validates and builds the context through Yoga's envelop. A refusal gives
   * the place back and fails this operation only.
   * @returns execution arguments, or the GraphQL errors of the refusal (redacted, with request id).
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
    try {
      // Persisted operations resolve here as Yoga's onParams does for HTTP and SSE; a refusal
      // (GraphQLError) fails this operation only.
      const params = (await this.#runtime.persistedOperations.resolveParams({
        query: payload.query,
        ...(payload.operationName ? { operationName: payload.operationName } : {}),
        ...(payload.variables ? { variables: payload.variables } : {}),
        ...(payload.extensions ? { extensions: payload.extensions } : {}),
      })) as typeof payload;
      const viewer = ctx.extra.viewer;
      const key = viewer
        ? shareKeyOf(params.query, params.operationName, params.variables, viewer)
        : undefined;
      const running = key === undefined ? undefined : this.#sharing.get(key);
      if (running && key !== undefined) {
        // Joins the running execution of the same operation: parsed, validated and allowed alike.
        const member = running.join(
          this.#joined(ctx.extra.record, running.operationName, true),
          this.#directDelivery(ctx.extra.socket, id, ctx.extra.record),
        );
        return {
          schema: running.schema,
          operationName: running.operationName,
          document: running.document,
          variableValues: params.variables ?? null,
          contextValue: { requestRecord: ctx.extra.record },
          // A member from now on: the execution cannot end before graphql-ws subscribes.
          rootValue: { member } as EnvelopedRoot,
        };
      }
      const { schema, execute, subscribe, contextFactory, parse, validate } = this.#runtime.yoga.getEnveloped(
        {
          ...ctx,
          viewer: ctx.extra.viewer ?? null,
          params,
          requestRecord: ctx.extra.record,
        } as never,
      );
      // parse throws the syntax error or the token limit breach of this operation only.
      const document = parse(params.query);
      const errors = validate(schema, document);
      if (errors.length > 0) return refuse(errors);
      const contextValue = await contextFactory();
      return {
        schema,
        operationName: params.operationName ?? null,
        document,
        variableValues: params.variables ?? null,
        contextValue,
        rootValue: {
          execute,
          subscribe,
          ...(key !== undefined && isShareable(document, params.operationName)
            ? { share: { key, deliver: this.#directDelivery(ctx.extra.socket, id, ctx.extra.record) } }
            : {}),
        } as EnvelopedRoot,
      };
    } catch (error) {
      if (error instanceof GraphQLError) return refuse([error]);
      operations.delete(id);
      return this.#unexpected(error, id);
    }
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

  /**
   * graphql-ws `subscribe`: joins the shared execution of the operation's key when one runs (also
   * when another subscriber started it meanwhile), else subscribes through the envelop and, when the
   * operation may be shared, starts sharing its source.
   */
  async #subscribeShared(args: Parameters<NonNullable<ServerOptions['subscribe']>>[0]) {
    const metrics = this.#metrics;
    const root = args.rootValue as EnvelopedRoot;
    if (root.member) return root.member;
    const share = root.share;
    const running = share && this.#sharing.get(share.key);
    if (share && running) {
      // Another subscriber started the same execution since onSubscribe: join it.
      return running.join(
        this.#joined(requestRecordOf(args.contextValue), running.operationName, true),
        share.deliver,
      );
    }
    if (!share) return root.subscribe!(args);
    // The bus subscription made for a shared execution counts its members (subscriberCount).
    const members = { count: () => 1 };
    const result = await sharedSubscriberCount.run(
      () => members.count(),
      () => root.subscribe!(args),
    );
    if (!isAsyncIterable(result)) return result;
    const source = result[Symbol.asyncIterator]();
    const again = this.#sharing.get(share.key);
    if (again) {
      // Started meanwhile (while this one subscribed): join it, drop this one.
      // The plugins counted this operation already; only the live gauge follows the member.
      void Promise.resolve(source.return?.()).catch(() => undefined);
      return again.join(
        this.#joined(requestRecordOf(args.contextValue), again.operationName, false),
        share.deliver,
      );
    }
    // The plugins count the shared execution as one live subscription while it runs; members are
    // counted one by one instead (joined), so that count is taken back for the execution's life.
    const live = { transport: 'graphql-ws' } as const;
    metrics?.liveSubscriptions.dec(live);
    const operationName = args.operationName ?? null;
    const group = this.#sharing.start(
      share.key,
      source,
      { schema: args.schema, document: args.document, operationName },
      () => metrics?.liveSubscriptions.inc(live),
    );
    members.count = () => group.members.size;
    return group.join(this.#joined(requestRecordOf(args.contextValue), operationName, false), share.deliver);
  }

  /**
   * A result shared by every subscriber of an event is redacted once, and stays one object (so it is
   * also serialized once, see sharedPayloadReplacer and serializedPayload).
   */
  #redactOnce(result: ExecutionResult): ExecutionResult {
    let redacted = this.#redactedResults.get(result);
    if (redacted === undefined) {
      redacted = redactExecutionResult(result);
      this.#redactedResults.set(result, redacted);
    }
    return redacted;
  }

  /**
   * How a member of a shared execution receives results: written to its socket as graphql-ws would
   * (`{"id":…,"type":"next","payload":…}`, through the guarded send and its back-pressure), with no
   * promise, hook or serialization per subscriber. Its own request id goes on errors (the shared
   * result carries the first member's) and their codes in its own access line.
   */
  #directDelivery(
    socket: WebSocket,
    id: string,
    record: RequestRecord | undefined,
  ): (result: ExecutionResult) => void {
    // Only the id is kept per member (a flat string); the message head is built per send.
    const idJson = JSON.stringify(id);
    return (result) => {
      if (socket.readyState !== socket.OPEN) return;
      let own = result;
      if (result.errors?.length && record) {
        for (const error of result.errors) record.errorCodes.add(errorCodeOf(error, 'INTERNAL_SERVER_ERROR'));
        own = withRequestId(result, record.id);
      }
      socket.send(`{"id":${idJson},"type":"next","payload":${serializedPayload(this.#redactOnce(own))}}`);
    };
  }

  /**
   * What the plugins would have recorded for a member that skipped them: its operation name in its
   * access line, the operation (when `count`) and the live gauge, which the returned callback
   * lowers when the member leaves.
   */
  #joined(
    record: RequestRecord | undefined,
    operationName: string | null,
    count: boolean,
  ): (() => void) | undefined {
    const metrics = this.#metrics;
    if (operationName) record?.operationNames.add(operationName);
    if (!metrics) return undefined;
    if (count) {
      const operation = metrics.operationLabel(operationName);
      metrics.operations.inc({ operation, type: 'subscription', outcome: 'success' });
    }
    metrics.liveSubscriptions.inc({ transport: 'graphql-ws' });
    return () => metrics.liveSubscriptions.dec({ transport: 'graphql-ws' });
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
 * Runs an enveloped execute/subscribe so that a throw becomes an error result of that operation
 * (graphql-ws would otherwise close the whole socket with 4500).
 */
async function runSafely<T>(run: () => T | Promise<T>): Promise<T | ExecutionResult> {
  try {
    return await run();
  } catch (error) {
    return {
      errors: [
        error instanceof GraphQLError
          ? redactGraphQLError(error)
          : new GraphQLError('Unexpected error.', { extensions: { code: 'internal-error' } }),
      ],
    };
  }
}

/**
 * Yoga's enveloped execute/subscribe, carried to graphql-ws through `rootValue`, and the shared
 * execution the operation may start or join (`deliver`: how its member receives results).
 */
type EnvelopedRoot = {
  execute?: NonNullable<ServerOptions['execute']>;
  subscribe?: NonNullable<ServerOptions['subscribe']>;
  share?: { key: string; deliver: (result: ExecutionResult) => void };
  /** The member iterator of a subscriber that joined in onSubscribe. */
  member?: AsyncIterableIterator<ExecutionResult>;
};

function isAsyncIterable<T>(
  value: T | AsyncIterable<ExecutionResult>,
): value is AsyncIterable<ExecutionResult> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
