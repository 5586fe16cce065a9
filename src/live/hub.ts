import {
  type DocumentNode,
  type ExecutionResult,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  parse,
} from 'graphql';
import { type GraphQLParams, getSSEProcessor, isAsyncIterable, type Plugin } from 'graphql-yoga';
import { onTokenExpiry, tokenExpiredError } from '../auth/token-expiry.ts';
import type { Viewer } from '../auth/viewer.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { redactExecutionResult } from '../lib/redaction.ts';
import { errorCodeOf, type RequestRecord } from '../lib/request-record.ts';
import { withRequestId } from '../plugins/request-id.ts';
import { isShareable, type SharedExecution, SharedSubscriptions, shareKeyOf } from './shared-execution.ts';

/** Results a pulled member ({@link LiveSubscription.results}) may hold unread: the event bus's `maxBufferedEvents`. */
const MAX_QUEUED_RESULTS = 1_000;

/**
 * What a live transport passes to Yoga's `getResultForParams` as its server context: the request's
 * viewer (resolved by the transport), its request record, and `live`, which asks the hub to serve the
 * operation from a shared execution when it is a live subscription.
 */
export interface LiveServerContext {
  viewer?: Viewer | null;
  requestRecord?: RequestRecord;
  live?: LiveOptions;
}

/** How a transport wants its members served. */
export interface LiveOptions {
  /**
   * True (SSE roads): a member ends at its token's `exp` with one last result carrying a
   * `token-expired` error. False (graphql-ws): the transport ends the whole connection then.
   */
  endsAtTokenExpiry: boolean;
  /**
   * True for a caller that does not know the hub (Yoga's own request handling, marked by
   * src/plugins/live-requests.ts): a member is answered with its {@link LiveSubscription.results},
   * an async iterable Yoga's SSE processor frames, rather than the member itself.
   */
  iterable?: boolean;
}

/**
 * One result as every member of a shared execution receives it: redacted once, serialized once
 * (`json`, the result as Yoga's SSE processor writes it: errors without their `http` and
 * `unexpected` extensions). Members whose result carries errors get their own event (their own
 * request id); all others share one instance, so a transport may cache its framing per event.
 */
export class LiveEvent {
  readonly result: ExecutionResult;
  #json: string | undefined;
  constructor(result: ExecutionResult) {
    this.result = result;
  }
  /** The result's JSON text, computed on first use. */
  get json(): string {
    this.#json ??= stringifyResult(this.result);
    return this.#json;
  }
}

/** Where a member's events go: the transport's framing and back-pressure. */
export interface LiveSink {
  /** One event; a throw ends this member alone. */
  next(event: LiveEvent): void;
  /**
   * The member ended: with no argument when its execution completed or its token expired (after
   * the last event), with the failure when the execution failed or the member fell behind.
   */
  end(failure?: unknown): void;
}

/** What a member knows of its request. */
interface MemberRequest {
  record: RequestRecord | undefined;
  expiresAt: number;
  options: LiveOptions;
  /** `cardgraph_graphql_live_subscriptions` label. */
  transport: 'graphql-ws' | 'sse';
}

/**
 * One subscriber of a shared live execution, as `getResultForParams` returns it in place of a
 * result. The transport {@link attach}es its sink (results delivered before that are kept in
 * order), or reads {@link results}, and calls {@link close} when its client leaves.
 */
export class LiveSubscription {
  readonly #hub: LiveHub;
  readonly #request: MemberRequest;
  readonly #operation: string;
  #early: LiveEvent[] | undefined = [];
  #sink: LiveSink | undefined;
  #member!: AsyncIterableIterator<ExecutionResult>;
  #cancelExpiry: (() => void) | undefined;
  #ended = false;

  /** @internal made by {@link LiveHub} only. */
  constructor(hub: LiveHub, request: MemberRequest, operation: string) {
    this.#hub = hub;
    this.#request = request;
    this.#operation = operation;
  }

  /** @internal joins `group` (done by {@link LiveHub}). */
  join(group: SharedExecution, onLeave: (() => void) | undefined): void {
    this.#member = group.join(onLeave, (result) => this.#deliver(result));
  }

  /**
   * Hands this member's events to `sink` from now on (those that came before first, in order) until
   * it ends: execution done, failed, token expired (with `endsAtTokenExpiry`) or {@link close}.
   */
  attach(sink: LiveSink): void {
    this.#sink = sink;
    const early = this.#early ?? [];
    this.#early = undefined;
    for (const event of early) this.#send(event);
    if (this.#ended) return;
    this.#member.next().then(
      () => this.#end(),
      (error: unknown) => this.#end(error),
    );
    if (this.#ended || !this.#request.options.endsAtTokenExpiry) return;
    this.#cancelExpiry = onTokenExpiry(this.#request.expiresAt, () => this.expire());
  }

  /**
   * Ends the member as a token's expiry does (with `endsAtTokenExpiry`, at its own token's `exp`):
   * one last result carrying `token-expired`, counted in `cardgraph_graphql_errors_total`, then its
   * end. Also called by a transport whose connection lives by another token (graphql-sse's
   * single-connection stream ends its operations at the `exp` of the token its `GET` was opened
   * with), so the same end is written and counted alike. Nothing once the member has ended.
   */
  expire(): void {
    if (this.#ended) return;
    const metrics = this.#hub.metrics;
    metrics?.graphqlErrors.inc({
      operation: this.#operation,
      code: metrics.errorCodeLabel('token-expired'),
    });
    this.#send(this.#hub.event({ errors: [tokenExpiredError()] }, this.#request.record));
    this.#end();
  }

  /** The client left: the member leaves its execution (the last one out stops it); its sink hears nothing more. */
  close(): void {
    this.#ended = true;
    this.#sink = undefined;
    this.#cancelExpiry?.();
    void this.#member.return?.();
  }

  /**
   * The member's results as an async generator, for a transport that pulls them (graphql-sse's
   * single-connection mode frames each with its operation id): done when the execution ends, fails
   * or the token expires; `return()` leaves. A reader more than 1,000 results behind is ended (logged).
   */
  results(): AsyncGenerator<ExecutionResult, undefined, undefined> {
    let queue: ExecutionResult[] = [];
    let waiter: ((step: IteratorResult<ExecutionResult, undefined>) => void) | undefined;
    let done = false;
    const doneStep = (): IteratorResult<ExecutionResult, undefined> => ({ value: undefined, done: true });
    const finish = (drain: boolean) => {
      if (done) return;
      done = true;
      if (!drain) queue = [];
      const waiting = waiter;
      waiter = undefined;
      waiting?.(doneStep());
    };
    this.attach({
      next: (event) => {
        if (done) return;
        if (waiter) {
          const waiting = waiter;
          waiter = undefined;
          waiting({ value: event.result, done: false });
        } else if (queue.length >= MAX_QUEUED_RESULTS) {
          this.#hub.logger.warn(
            { queued: queue.length, reqId: this.#request.record?.id },
            'live slow reader ended',
          );
          this.close();
          finish(false);
        } else {
          queue.push(event.result);
        }
      },
      end: () => finish(true),
    });
    const generator: AsyncGenerator<ExecutionResult, undefined, undefined> = {
      next() {
        const value = queue.shift();
        if (value !== undefined) return Promise.resolve({ value, done: false });
        if (done) return Promise.resolve(doneStep());
        return new Promise((resolve) => {
          waiter = resolve;
        });
      },
      return: () => {
        this.close();
        finish(false);
        return Promise.resolve(doneStep());
      },
      throw: (error: unknown) => {
        this.close();
        finish(false);
        return Promise.reject(error);
      },
      [Symbol.asyncIterator]() {
        return generator;
      },
      [Symbol.asyncDispose]: async () => {
        this.close();
        finish(false);
      },
    };
    return generator;
  }

  #deliver(result: ExecutionResult): void {
    const event = this.#hub.event(result, this.#request.record);
    if (this.#early) this.#early.push(event);
    else this.#send(event);
  }

  #send(event: LiveEvent): void {
    const sink = this.#sink;
    if (!sink) return;
    try {
      sink.next(event);
    } catch (error) {
      this.close();
      sink.end(error);
    }
  }

  #end(failure?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#cancelExpiry?.();
    const sink = this.#sink;
    this.#sink = undefined;
    void this.#member.return?.();
    if (failure === undefined) sink?.end();
    else sink?.end(failure);
  }
}

/**
 * The live-subscription hub: live subscriptions that are identical for their viewers (same document
 * text, operation name, variables, vaults and scopes: {@link shareKeyOf}; no `after` argument:
 * {@link isShareable}) share one execution, whatever transport each came by: it is the only place
 * live subscriptions are shared. It is a Yoga plugin's params handler, so every road reaches it
 * through Yoga's public `getResultForParams` with a {@link LiveServerContext} marked `live`, after
 * every `onParams` plugin (persisted operations): the lean HTTP path's SSE road, graphql-sse and
 * graphql-ws mark it themselves; Yoga's own request handling (and the lean path's other streaming
 * answers) is marked by src/plugins/live-requests.ts with `iterable`, and answered with the
 * member's {@link LiveSubscription.results}, which Yoga's SSE processor frames:
 * - the first member's operation goes through Yoga's own handling (parse, validation, limits, cost,
 *   context, subscribe: every plugin) with a context that carries no HTTP request (so the source
 *   outlives that member's token) and `liveSubscribers`, the member count the event bus counts the
 *   execution's subscription as;
 * - later members join it without a context of their own: the document passed parse, validation,
 *   limits and cost when the execution started, and those depend on nothing else;
 * - anything else (queries, resuming subscriptions, unparsable documents, no viewer) is Yoga's,
 *   unchanged.
 * Here, once for every transport: each member's operation name in its access line, its count in
 * `cardgraph_graphql_operations_total` and `cardgraph_graphql_live_subscriptions{transport}` (the
 * plugins count the shared execution itself as one, which is taken back while it runs), each result
 * redacted once for all members and serialized once for the transports that write
 * {@link LiveEvent.json} (Yoga's SSE processor serializes the `results()` it frames per stream), the
 * member's own request id (and error codes in its access line) on results with errors, and (for
 * SSE roads) the end at its token's expiry. Transports keep only their framing and back-pressure
 * ({@link LiveSink}).
 */
export class LiveHub {
  readonly #sharing = new SharedSubscriptions();
  readonly #redacted = new WeakMap<object, ExecutionResult>();
  readonly #events = new WeakMap<object, LiveEvent>();
  /** Server contexts answered with a member's {@link LiveSubscription.results} (`live.iterable`). */
  readonly #pulledBy = new WeakSet<object>();
  readonly #sseProcessor = getSSEProcessor();
  /** @internal read by {@link LiveSubscription}. */
  readonly metrics: Metrics | undefined;
  /** @internal read by {@link LiveSubscription}. */
  readonly logger: Logger;
  /** The schema Yoga serves (kept with each shared execution), from `onSchemaChange`. */
  #schema: GraphQLSchema | undefined;

  constructor(options: { metrics?: Metrics; logger: Logger }) {
    this.metrics = options.metrics;
    this.logger = options.logger;
  }

  /** Shared executions running (diagnostics and tests). */
  get executions(): number {
    return this.#sharing.size;
  }

  /** True when `result` (of `getResultForParams`) is a member this hub serves. */
  owns(result: unknown): result is LiveSubscription {
    return result instanceof LiveSubscription;
  }

  /** The Yoga plugin: the params handler of operations whose server context is marked `live`. */
  plugin(): Plugin {
    return {
      onSchemaChange: ({ schema }) => {
        this.#schema = schema;
      },
      onParams: ({ context, paramsHandler, setParamsHandler }) => {
        if (!(context as LiveServerContext).live) return;
        type Handler = typeof paramsHandler;
        setParamsHandler(((payload: Parameters<Handler>[0]) =>
          this.#handle(payload as never, paramsHandler as never)) as Handler);
      },
      // Yoga's own request handling: a member it was answered with is a subscription's stream, which
      // Yoga frames as SSE (its processors offer subscriptions nothing else); the marking plugin
      // marks only requests that accept SSE. Yoga learns a request is a subscription's in its
      // envelop `onSubscribe`, which a joining member skips.
      onResultProcess: ({ result, serverContext, setResultProcessor }) => {
        if (this.#pulledBy.has(serverContext) && isAsyncIterable(result)) {
          setResultProcessor(this.#sseProcessor, 'text/event-stream');
        }
      },
    };
  }

  /**
   * `result` as members receive it: redacted once per result object; with errors and a request
   * record, stamped with that request's id (its codes added to its access line).
   * @internal used by {@link LiveSubscription}.
   */
  event(result: ExecutionResult, record: RequestRecord | undefined): LiveEvent {
    let redacted = this.#redacted.get(result);
    if (redacted === undefined) {
      redacted = redactExecutionResult(result);
      this.#redacted.set(result, redacted);
    }
    if (redacted.errors?.length && record) {
      for (const error of redacted.errors) record.errorCodes.add(errorCodeOf(error, 'INTERNAL_SERVER_ERROR'));
      return new LiveEvent(withRequestId(redacted, record.id));
    }
    let event = this.#events.get(redacted);
    if (event === undefined) {
      event = new LiveEvent(redacted);
      this.#events.set(redacted, event);
    }
    return event;
  }

  async #handle(
    payload: { request: unknown; params: GraphQLParams; context: LiveServerContext },
    yogaHandler: (payload: unknown) => unknown,
  ): Promise<unknown> {
    const { params, context } = payload;
    const viewer = context.viewer;
    const options = context.live!;
    if (!viewer || typeof params.query !== 'string') return yogaHandler(payload);
    const operationName = params.operationName ?? null;
    const variables = (params.variables ?? null) as Record<string, unknown> | null;
    const key = shareKeyOf(params.query, operationName, variables, viewer);
    const record = context.requestRecord;
    const request: MemberRequest = {
      record,
      expiresAt: viewer.expiresAt,
      options,
      transport: transportLabel(record),
    };
    const answer = (member: LiveSubscription) => {
      if (!options.iterable) return member;
      this.#pulledBy.add(context);
      return member.results();
    };
    const running = this.#sharing.get(key);
    if (running) return answer(this.#join(running, request, true));
    let document: DocumentNode | undefined;
    try {
      document = parse(params.query);
    } catch {
      // Yoga answers the syntax error.
    }
    if (!document || !isShareable(document, operationName)) return yogaHandler(payload);
    // Yoga's own handling (every plugin) with a context without the HTTP request: the shared
    // source outlives its first member's token (each member ends at its own).
    const members = { count: () => 1 };
    const shared: LiveServerContext & { liveSubscribers: () => number } = {
      viewer,
      ...(record ? { requestRecord: record } : {}),
      liveSubscribers: () => members.count(),
    };
    const result = await yogaHandler({ request: undefined, params, context: shared });
    if (!isAsyncIterable(result)) return result;
    const source = (result as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator]();
    const again = this.#sharing.get(key);
    if (again) {
      // Started meanwhile: join it and drop this one. The plugins counted this operation already,
      // and lower the live gauge they raised for it when its source ends.
      void Promise.resolve(source.return?.()).catch(() => undefined);
      return answer(this.#join(again, request, false));
    }
    // The plugins count the shared execution as one live subscription while it runs; members are
    // counted one by one instead, so that count is taken back for the execution's life.
    const live = { transport: request.transport };
    this.metrics?.liveSubscriptions.dec(live);
    const schema = this.#schema!;
    const group = this.#sharing.start(key, source, { schema, document, operationName }, () =>
      this.metrics?.liveSubscriptions.inc(live),
    );
    members.count = () => group.members.size;
    return answer(this.#join(group, request, false));
  }

  /**
   * A member of `group`, recorded as the plugins record an operation: its name in the access line,
   * the operation counted (when `count`: it skipped the plugins) and the live gauge raised until it leaves.
   */
  #join(group: SharedExecution, request: MemberRequest, count: boolean): LiveSubscription {
    const metrics = this.metrics;
    const name = group.operationName;
    if (name) request.record?.operationNames.add(name);
    const operation = metrics?.operationLabel(name) ?? 'anonymous';
    if (metrics && count) metrics.operations.inc({ operation, type: 'subscription', outcome: 'success' });
    const live = { transport: request.transport };
    metrics?.liveSubscriptions.inc(live);
    const subscription = new LiveSubscription(this, request, operation);
    subscription.join(group, metrics ? () => metrics.liveSubscriptions.dec(live) : undefined);
    return subscription;
  }
}

/** The live gauge's transport label of a request, as src/plugins/operation-metrics.ts labels it. */
function transportLabel(record: RequestRecord | undefined): 'graphql-ws' | 'sse' {
  return record?.transport === 'graphql-ws' ? 'graphql-ws' : 'sse';
}

/**
 * A result as Yoga's SSE processor writes it (`jsonStringifyResultWithoutInternals`): errors
 * without their `http` and `unexpected` extensions, and no `extensions.http`.
 */
export function stringifyResult(result: ExecutionResult): string {
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
