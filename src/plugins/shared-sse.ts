import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  type DocumentNode,
  type ExecutionResult,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  parse,
} from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { onTokenExpiry, tokenExpiredError } from '../auth/token-expiry.ts';
import type { Viewer } from '../auth/viewer.ts';
import { sharedSubscriberCount } from '../events/card-event-bus.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { redactExecutionResult } from '../lib/redaction.ts';
import { errorCodeOf, type RequestRecord } from '../lib/request-record.ts';
import {
  isShareable,
  type SharedExecution,
  SharedSubscriptions,
  shareKeyOf,
} from '../server/graphql-ws-sharing.ts';
import { withRequestId } from './request-id.ts';
import type { ViewerAuth } from './viewer-auth.ts';

/** Keep-alive comment interval of every open shared SSE stream (ms): Yoga's SSE ping interval. */
const PING_INTERVAL_MS = 12_000;
const PING = ':\n\n';
/** {@link PING} as one HTTP/1.1 chunk (RFC 9112 §7.1), written straight to the socket. */
const PING_CHUNK = Buffer.from(`${Buffer.byteLength(PING).toString(16)}\r\n${PING}\r\n`);
const COMPLETE = 'event: complete\ndata:\n\n';
/** Results a {@link SharedSseStreams.results} member may hold unread: the event bus's `maxBufferedEvents`. */
const MAX_QUEUED_RESULTS = 1_000;
/** Yoga's SSE response headers (its `getSSEProcessor`), word for word. */
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  Connection: 'keep-alive',
  'Cache-Control': 'no-cache',
  'Content-Encoding': 'none',
} as const;
/**
 * graphql-sse's distinct-connections response headers (its handler's, word for word): its events are
 * Yoga's (`event: next` with the result, `event: complete` with empty data), only the type differs.
 */
export const GRAPHQL_SSE_HEADERS = {
  connection: 'keep-alive',
  'cache-control': 'no-cache',
  'content-encoding': 'none',
  'content-type': 'text/event-stream; charset=utf-8',
} as const;

/** The server-context marker the HTTP layer sets on a request it can serve as a shared SSE stream. */
export type SharedSseServerContext = {
  /** Set by src/server/graphql-http.ts on `Accept: text/event-stream` requests it writes itself. */
  sharedSse?: true;
  /** The request's viewer when the HTTP layer resolved it already (graphql-sse's distinct mode). */
  viewer?: Viewer | null;
  /** A refused token of the request: useViewerAuth throws it instead of checking the token again. */
  viewerRefusal?: GraphQLError;
  requestRecord?: RequestRecord;
};

/**
 * What the shared-SSE params handler returns in place of Yoga's result: a member of a shared
 * execution, waiting for its Node response ({@link SharedSseStreams.serve}). Results delivered
 * before it is served are kept in order.
 */
export class SharedSseSubscription {
  /** Results delivered before {@link SharedSseStreams.serve} attached the response. */
  early: ExecutionResult[] | undefined = [];
  /** Writes one result to the response once served. */
  write: ((result: ExecutionResult) => void) | undefined;
  /** The member iterator: resolves done when the execution finishes, rejects when it fails. */
  member!: AsyncIterableIterator<ExecutionResult>;
  readonly record: RequestRecord | undefined;
  /** The token's `exp` (ms since the epoch): the stream ends then with a `token-expired` result. */
  readonly expiresAt: number;
  /** Operation label of the metrics (bounded), for the errors of the per-member expiry result. */
  readonly operation: string;
  constructor(record: RequestRecord | undefined, expiresAt: number, operation: string) {
    this.record = record;
    this.expiresAt = expiresAt;
    this.operation = operation;
  }

  deliver = (result: ExecutionResult): void => {
    if (this.write) this.write(result);
    else this.early?.push(result);
  };
}

/** An `event: next` encoded once: as a body and as a whole HTTP/1.1 chunk of it. */
interface EncodedEvent {
  body: Buffer;
  chunk: Buffer;
}

/** One open stream: what a subscriber keeps while it idles. */
interface OpenStream {
  res: ServerResponse;
  /** The socket of a chunked response: events go to it as prebuilt chunks. */
  raw: Socket | undefined;
  subscription: SharedSseSubscription;
  cancelExpiry: () => void;
}

/**
 * SSE subscriptions on `/graphql` (Yoga's SSE transport, `Accept: text/event-stream`) and on
 * `/graphql/stream` (graphql-sse, both modes) as cheap as graphql-ws's shared executions (issue 21
 * item 1). graphql-sse's distinct-connections mode has Yoga's wire (only its `Content-Type`
 * differs): src/server/graphql-http.ts serves it with {@link serve} too. Its single-connection mode
 * frames events with each operation's id, so graphql-sse writes them: its operations join the same
 * executions through {@link results}. The HTTP layer (src/server/graphql-http.ts)
 * runs the request through Yoga's request parsing and `onParams` hooks (CSRF prevention, input
 * checks, persisted operations) as for any request, marking its server context `sharedSse`; this
 * plugin's params handler then:
 * - resolves the viewer once (a refused token goes on to Yoga's handling, which answers it as ever,
 *   without checking the token a second time: `viewerRefusal`);
 * - joins the running shared execution of the same operation (document text, operation name,
 *   variables, vaults and scopes: graphql-ws's {@link shareKeyOf}), as graphql-ws joins one: the
 *   document passed parse, validation, operation limits and cost when the execution started, and
 *   those depend on nothing else; or
 * - starts one: a live subscription ({@link isShareable}) goes through Yoga's own params handler
 *   (parse, validation, limits, context, subscribe: every plugin) with a context that carries no
 *   HTTP request, so the shared source does not end with its first member's token; anything else
 *   (queries, resuming subscriptions, unparsable documents) is Yoga's, unchanged.
 * A member is written to its Node response directly: one redaction and one serialization per event
 * for every stream (`event: next` with the once-serialized result), its own request id on errors,
 * a `token-expired` result and `complete` at its token's `exp` (as src/plugins/token-expiry.ts
 * ends an HTTP stream), `complete` when the execution ends; no Yoga ReadableStream, plugin chain or
 * timer per subscriber, one keep-alive timer for all streams. A stream whose client reads too slowly
 * (more than `maxBufferedBytes` unsent) is cut, as graphql-ws closes such a socket.
 * `cardgraph_graphql_operations_total` and `cardgraph_graphql_live_subscriptions{transport="sse"}`
 * count every member, as the plugins count an unshared subscription.
 */
export class SharedSseStreams {
  readonly #sharing = new SharedSubscriptions();
  readonly #open = new Set<OpenStream>();
  readonly #redacted = new WeakMap<object, ExecutionResult>();
  readonly #events = new WeakMap<object, EncodedEvent>();
  readonly #viewerAuth: ViewerAuth;
  readonly #metrics: Metrics | undefined;
  readonly #logger: Logger;
  readonly #maxBufferedBytes: number;
  /** The schema Yoga serves (kept with each shared execution), from `onSchemaChange`. */
  #schema: GraphQLSchema | undefined;
  #ping: NodeJS.Timeout | undefined;
  #encoded = 0;

  constructor(options: {
    viewerAuth: ViewerAuth;
    metrics?: Metrics;
    logger: Logger;
    /** Unsent bytes a stream may hold before it is cut: graphql-ws's `maxBufferedBytes`. */
    maxBufferedBytes: number;
  }) {
    this.#viewerAuth = options.viewerAuth;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#maxBufferedBytes = options.maxBufferedBytes;
  }

  /** Shared executions running (diagnostics and tests). */
  get executions(): number {
    return this.#sharing.size;
  }

  /** `event: next` frames built so far: one per result however many streams write it (diagnostics and tests). */
  get eventsEncoded(): number {
    return this.#encoded;
  }

  /** Streams open (diagnostics and tests). */
  get streams(): number {
    return this.#open.size;
  }

  /** The Yoga plugin: the params handler of requests marked `sharedSse` (see the class). */
  plugin(): Plugin {
    return {
      onSchemaChange: ({ schema }) => {
        this.#schema = schema;
      },
      onParams: ({ context, paramsHandler, setParamsHandler }) => {
        if (!(context as SharedSseServerContext).sharedSse) return;
        type Handler = typeof paramsHandler;
        setParamsHandler(((payload: Parameters<Handler>[0]) =>
          this.#handle(payload as never, paramsHandler as never)) as Handler);
      },
    };
  }

  /**
   * The viewer of an `Authorization` header (src/plugins/viewer-auth.ts's `fromHeader`): null
   * without a token.
   * @throws GraphQLError with the token's code and `http.status` 401 for a bad token (logged once).
   */
  viewerOf(authorization: string | null): Promise<Viewer | null> {
    return this.#viewerAuth.fromHeader(authorization);
  }

  /** True when `result` is a member this class serves ({@link serve}). */
  owns(result: unknown): result is SharedSseSubscription {
    return result instanceof SharedSseSubscription;
  }

  async #handle(
    payload: {
      request: { headers: { get(name: string): string | null } };
      params: GraphQLParams;
      context: SharedSseServerContext;
    },
    yogaHandler: (payload: unknown) => unknown,
  ): Promise<unknown> {
    const { params, context } = payload;
    let viewer: Viewer | null;
    if (context.viewer) {
      // Resolved by the HTTP layer (/graphql/stream): the token is not verified a second time.
      viewer = context.viewer;
    } else {
      try {
        viewer = await this.#viewerAuth.fromHeader(payload.request.headers.get('authorization'));
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        context.viewerRefusal = error;
        return yogaHandler(payload);
      }
      context.viewer = viewer;
    }
    if (!viewer || typeof params.query !== 'string') return yogaHandler(payload);
    const operationName = params.operationName ?? null;
    const variables = (params.variables ?? null) as Record<string, unknown> | null;
    const key = shareKeyOf(params.query, operationName, variables, viewer);
    const record = context.requestRecord;
    const running = this.#sharing.get(key);
    if (running) return this.#join(running, record, viewer, true);
    let document: DocumentNode | undefined;
    try {
      document = parse(params.query);
    } catch {
      // Yoga answers the syntax error.
    }
    if (!document || !isShareable(document, operationName)) return yogaHandler(payload);
    // Yoga's own handling (every plugin) with a context without the HTTP request: the shared
    // source outlives its first member's token (each member ends at its own, see #serve).
    const shared: SharedSseServerContext = {
      viewer,
      ...(record ? { requestRecord: record } : {}),
    };
    const members = { count: () => 1 };
    const result = await sharedSubscriberCount.run(
      () => members.count(),
      () => yogaHandler({ request: undefined, params, context: shared }),
    );
    if (!isAsyncIterable(result)) return result;
    const source = result[Symbol.asyncIterator]();
    const again = this.#sharing.get(key);
    if (again) {
      // Started meanwhile: join it, drop this one (the plugins counted this operation already).
      void Promise.resolve(source.return?.()).catch(() => undefined);
      this.#metrics?.liveSubscriptions.dec({ transport: 'sse' });
      return this.#join(again, record, viewer, false);
    }
    // The plugins count the shared execution as one live subscription while it runs; members are
    // counted one by one instead, so that count is taken back for the execution's life.
    const live = { transport: 'sse' } as const;
    this.#metrics?.liveSubscriptions.dec(live);
    const group = this.#sharing.start(key, source, { schema: this.#schema!, document, operationName }, () =>
      this.#metrics?.liveSubscriptions.inc(live),
    );
    members.count = () => group.members.size;
    return this.#join(group, record, viewer, false);
  }

  /** A member of `group` (counted in the metrics and the access line as the plugins would). */
  #join(
    group: SharedExecution,
    record: RequestRecord | undefined,
    viewer: Viewer,
    count: boolean,
  ): SharedSseSubscription {
    const metrics = this.#metrics;
    const name = group.operationName;
    if (name) record?.operationNames.add(name);
    const operation = metrics?.operationLabel(name) ?? 'anonymous';
    if (metrics && count) metrics.operations.inc({ operation, type: 'subscription', outcome: 'success' });
    metrics?.liveSubscriptions.inc({ transport: 'sse' });
    const subscription = new SharedSseSubscription(record, viewer.expiresAt, operation);
    subscription.member = group.join(
      metrics ? () => metrics.liveSubscriptions.dec({ transport: 'sse' }) : undefined,
      subscription.deliver,
    );
    return subscription;
  }

  /**
   * Writes `subscription` to `res` until its execution ends (`complete`), its token expires
   * (`token-expired` result, `complete`), its client goes away or reads too slowly (cut).
   * @param headers the response headers: Yoga's SSE (`/graphql`, default) or graphql-sse's
   *   distinct-connections mode ({@link GRAPHQL_SSE_HEADERS}, `/graphql/stream`); the events are
   *   the same bytes, built once for every stream of either.
   */
  serve(
    res: ServerResponse,
    subscription: SharedSseSubscription,
    headers: Readonly<Record<string, string>> = SSE_HEADERS,
  ): void {
    res.writeHead(200, headers);
    // As Yoga: some browsers show nothing until the first bytes.
    res.write(PING);
    // Node keeps the header block it sent (`_header`, read by `headersSent`) for the response's
    // life as a chain of some 27 concatenated pieces (~860 bytes): a flat copy holds the same text
    // in ~300 (issue 21, idle subscriber).
    const sent = res as unknown as { _header?: unknown };
    if (typeof sent._header === 'string')
      sent._header = Buffer.from(sent._header, 'latin1').toString('latin1');
    // With the headers out, a chunked response's body is chunks on its socket: each event is written
    // as one chunk built once for every stream (ServerResponse.write would frame it per stream).
    const raw = res.chunkedEncoding && res.socket ? res.socket : undefined;
    let ended = false;
    const stream: OpenStream = { res, raw, subscription, cancelExpiry: () => {} };
    const end = (last?: string) => {
      if (ended) return;
      ended = true;
      subscription.write = () => {};
      stream.cancelExpiry();
      this.#open.delete(stream);
      if (this.#open.size === 0) this.#stopPing();
      void subscription.member.return?.();
      if (last !== undefined && !res.destroyed) res.end(last);
      else res.destroy();
    };
    const record = subscription.record;
    subscription.write = (result) => {
      if (res.destroyed) return;
      let own = result;
      if (result.errors?.length && record) {
        for (const error of result.errors) record.errorCodes.add(errorCodeOf(error, 'INTERNAL_SERVER_ERROR'));
        own = withRequestId(result, record.id);
      }
      if (res.writableLength > this.#maxBufferedBytes) {
        this.#logger.warn(
          { bufferedBytes: res.writableLength, reqId: record?.id },
          'SSE slow consumer cut: too much unsent data',
        );
        end();
        return;
      }
      const event = this.#event(own);
      if (raw) raw.write(event.chunk);
      else res.write(event.body);
    };
    const early = subscription.early ?? [];
    subscription.early = undefined;
    for (const result of early) subscription.write(result);
    res.once('close', () => end());
    subscription.member.next().then(
      () => end(COMPLETE),
      () => end(),
    );
    if (ended) return;
    stream.cancelExpiry = onTokenExpiry(subscription.expiresAt, () => {
      const expired: ExecutionResult = { errors: [tokenExpiredError()] };
      this.#metrics?.graphqlErrors.inc({
        operation: subscription.operation,
        code: this.#metrics.errorCodeLabel('token-expired'),
      });
      subscription.write?.(expired);
      end(COMPLETE);
    });
    if (ended) return;
    this.#open.add(stream);
    this.#ping ??= setInterval(() => {
      for (const open of this.#open) {
        if (open.res.destroyed) continue;
        if (open.raw) open.raw.write(PING_CHUNK);
        else open.res.write(PING);
      }
    }, PING_INTERVAL_MS).unref();
  }

  /**
   * `subscription`'s results as an async generator, for a transport that frames them itself
   * (graphql-sse's single-connection mode, src/plugins/graphql-sse.ts, whose events carry the
   * operation's id): each result redacted once for every member, with the member's own request id
   * on errors (its error codes in its access line); done when the execution ends (or fails: the
   * transport then completes the operation). `return()` leaves the execution. A member more than
   * {@link MAX_QUEUED_RESULTS} results behind its transport is ended (logged), as the event bus
   * ends a slow subscriber.
   */
  results(subscription: SharedSseSubscription): AsyncGenerator<ExecutionResult, undefined, undefined> {
    const record = subscription.record;
    let queue: ExecutionResult[] = [];
    let waiter: ((step: IteratorResult<ExecutionResult, undefined>) => void) | undefined;
    let done = false;
    let cancelExpiry = () => {};
    /** Ends the member; with `drain`, what is queued is still read first. */
    const finish = (drain = false) => {
      if (done) return;
      done = true;
      subscription.write = () => {};
      cancelExpiry();
      if (!drain) queue = [];
      void subscription.member.return?.();
      const waiting = waiter;
      waiter = undefined;
      waiting?.({ value: undefined, done: true });
    };
    subscription.write = (result) => {
      let own = this.#redact(result);
      if (own.errors?.length && record) {
        for (const error of own.errors) record.errorCodes.add(errorCodeOf(error, 'INTERNAL_SERVER_ERROR'));
        own = withRequestId(own, record.id);
      }
      if (waiter) {
        const waiting = waiter;
        waiter = undefined;
        waiting({ value: own, done: false });
      } else if (queue.length >= MAX_QUEUED_RESULTS) {
        this.#logger.warn({ queued: queue.length, reqId: record?.id }, 'graphql-sse slow consumer ended');
        finish();
      } else {
        queue.push(own);
      }
    };
    const early = subscription.early ?? [];
    subscription.early = undefined;
    for (const result of early) subscription.write(result);
    subscription.member.next().then(
      () => finish(true),
      () => finish(true),
    );
    // The member's own token (its POST's) ends it, as src/plugins/token-expiry.ts ends an operation.
    if (!done) {
      cancelExpiry = onTokenExpiry(subscription.expiresAt, () => {
        this.#metrics?.graphqlErrors.inc({
          operation: subscription.operation,
          code: this.#metrics.errorCodeLabel('token-expired'),
        });
        subscription.write?.({ errors: [tokenExpiredError()] });
        finish(true);
      });
    }
    const doneStep = (): IteratorResult<ExecutionResult, undefined> => ({ value: undefined, done: true });
    const generator: AsyncGenerator<ExecutionResult, undefined, undefined> = {
      next() {
        const value = queue.shift();
        if (value !== undefined) return Promise.resolve({ value, done: false });
        if (done) return Promise.resolve(doneStep());
        return new Promise((resolve) => {
          waiter = resolve;
        });
      },
      return() {
        finish();
        return Promise.resolve(doneStep());
      },
      throw(error: unknown) {
        finish();
        return Promise.reject(error);
      },
      [Symbol.asyncIterator]() {
        return generator;
      },
      async [Symbol.asyncDispose]() {
        finish();
      },
    };
    return generator;
  }

  /** `result` redacted (src/lib/redaction.ts), once per result object however many members send it. */
  #redact(result: ExecutionResult): ExecutionResult {
    let redacted = this.#redacted.get(result);
    if (redacted === undefined) {
      redacted = redactExecutionResult(result);
      this.#redacted.set(result, redacted);
    }
    return redacted;
  }

  #stopPing(): void {
    clearInterval(this.#ping);
    this.#ping = undefined;
  }

  /**
   * `event: next` of a result, redacted, serialized and UTF-8 encoded once per result object however
   * many streams write it.
   */
  #event(result: ExecutionResult): EncodedEvent {
    const redacted = this.#redact(result);
    let event = this.#events.get(redacted);
    if (event === undefined) {
      const text = `event: next\ndata: ${stringifyResult(redacted)}\n\n`;
      const size = Buffer.byteLength(text);
      const head = `${size.toString(16)}\r\n`;
      const chunk = Buffer.from(`${head}${text}\r\n`);
      event = { chunk, body: chunk.subarray(head.length, head.length + size) };
      this.#encoded++;
      this.#events.set(redacted, event);
    }
    return event;
  }
}

/**
 * A result as Yoga's SSE processor writes it (`jsonStringifyResultWithoutInternals`): errors
 * without their `http` and `unexpected` extensions, and no `extensions.http`.
 */
function stringifyResult(result: ExecutionResult): string {
  if (!result.errors?.length && !(result.extensions as { http?: unknown } | undefined)?.http) {
    return JSON.stringify(result);
  }
  const { http: _http, ...extensions } = (result.extensions ?? {}) as Record<string, unknown>;
  return JSON.stringify({
    ...result,
    ...(result.errors ? { errors: result.errors.map(formatError) } : {}),
    extensions: Object.keys(extensions).length > 0 ? extensions : undefined,
  });
}

function formatError(error: GraphQLError): GraphQLFormattedError {
  const json = error instanceof GraphQLError ? error.toJSON() : (error as GraphQLFormattedError);
  const {
    http: _http,
    unexpected: _unexpected,
    ...extensions
  } = (json.extensions ?? {}) as Record<string, unknown>;
  const { extensions: _all, ...rest } = json;
  return Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<ExecutionResult> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
