import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { type ExecutionResult, GraphQLError, parse } from 'graphql';
import {
  createGraphQLError,
  type GraphQLParams,
  isAsyncIterable,
  type YogaServerInstance,
} from 'graphql-yoga';
import { Counter } from 'prom-client';
import type { GraphQLContext } from '../context.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { RequestRecord } from '../lib/request-record.ts';
import type { LiveHub } from '../live/hub.ts';
import { isShareable } from '../live/shared-execution.ts';
import { authRefusal, GRAPHQL_SSE_PATH, operationRefusal } from '../plugins/graphql-sse.ts';
import type { ViewerAuth } from '../plugins/viewer-auth.ts';
import { MAX_REQUEST_BODY_BYTES, type ServerContext } from '../runtime/index.ts';
import { GRAPHQL_SSE_HEADERS, type LiveSseStreams, YOGA_SSE_HEADERS } from './live-sse.ts';

/**
 * Answers one request on `/graphql`: the lean path when it applies, else Yoga's own handling.
 * @returns nothing; the response is written (or Yoga's handler was started) when it returns.
 */
export type GraphqlHttpHandler = (req: IncomingMessage, res: ServerResponse, record: RequestRecord) => void;

type Yoga = YogaServerInstance<ServerContext, GraphQLContext>;

/** A result-processing hook of Yoga (its `onResultProcess` plugin hooks, in plugin order). */
type ResultProcessHook = (payload: {
  request: LeanRequest;
  acceptableMediaTypes: string[];
  result: unknown;
  setResult(result: unknown): void;
  resultProcessor: unknown;
  setResultProcessor(processor: ResultProcessor, mediaType: string): void;
  serverContext: object;
}) => unknown;
type ResultProcessor = (
  result: unknown,
  fetchAPI: unknown,
  mediaType: string,
) => Response | Promise<Response>;

/**
 * The members of Yoga's server object (reachable through its adapter) the lean path runs: the request
 * parsing hooks (`parseRequest`), the parameters-to-result pipeline with its `onParams` and
 * `onExecutionResult` hooks (`getResultForParams`), the result-processing hooks and the error
 * masking options. `parseRequest`, `onResultProcessHooks` and `maskedErrorsOpts` are not part of
 * Yoga's typed API: {@link createGraphqlHttpHandler} checks them at startup, so an upgrade that
 * changes them fails loudly instead of answering differently.
 */
interface YogaInternals {
  parseRequest(
    request: LeanRequest,
    serverContext: object,
  ): PromiseLike<{ response?: Response; requestParserResult?: GraphQLParams | GraphQLParams[] }>;
  getResultForParams(
    payload: { params: GraphQLParams; request: LeanRequest },
    context: object,
  ): PromiseLike<unknown> | unknown;
  onResultProcessHooks: ResultProcessHook[];
  maskedErrorsOpts: {
    maskError(error: unknown, message: string, isDev?: boolean): Error;
    errorMessage: string;
    isDev?: boolean;
  } | null;
  instrumentation: unknown;
  fetchAPI: { Response: typeof Response; Headers: typeof Headers; Request: typeof Request };
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * A Fetch-API `Request` stand-in over a Node request whose body has already been read: what Yoga's
 * hooks and our plugins read of a request (`method`, `url`, `headers.get`, `json()`), without the
 * stream, AbortSignal and Headers objects of whatwg-node's adapter.
 */
class LeanRequest {
  readonly method: string;
  readonly headers: LeanHeaders;
  readonly body = null;
  readonly #req: IncomingMessage;
  readonly #text: string | undefined;
  readonly #tooLarge: boolean;
  constructor(req: IncomingMessage, text: string | undefined, tooLarge: boolean) {
    this.#req = req;
    this.method = req.method ?? 'GET';
    this.headers = new LeanHeaders(req.headers);
    this.#text = text;
    this.#tooLarge = tooLarge;
  }
  /**
   * From the request target alone (origin-form, checked by {@link hasPlainTarget}), never the `Host`
   * header: a client's Host cannot add a query string or change the path (issue 20 item 6).
   */
  get url(): string {
    return `http://localhost${this.#req.url ?? '/'}`;
  }
  /** As whatwg-node's `Body.json()` (its SyntaxError message included), or the body-limit error. */
  json(): Promise<unknown> {
    if (this.#tooLarge) return Promise.reject(requestBodyTooLarge());
    const text = this.#text ?? '';
    try {
      return Promise.resolve(JSON.parse(text));
    } catch (error) {
      if (error instanceof SyntaxError) error.message += `, "${text}" is not valid JSON`;
      return Promise.reject(error);
    }
  }
  text(): Promise<string> {
    return this.#tooLarge ? Promise.reject(requestBodyTooLarge()) : Promise.resolve(this.#text ?? '');
  }
}

/** `Headers` reading a Node request's header object (names are lowercase there; repeats joined). */
class LeanHeaders {
  readonly #headers: IncomingMessage['headers'];
  constructor(headers: IncomingMessage['headers']) {
    this.#headers = headers;
  }
  get(name: string): string | null {
    const value = this.#headers[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
  has(name: string): boolean {
    return this.#headers[name.toLowerCase()] !== undefined;
  }
  forEach(callback: (value: string, name: string) => void): void {
    for (const name of Object.keys(this.#headers)) callback(this.get(name)!, name);
  }
  *entries(): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.#headers)) yield [name, this.get(name)!];
  }
  [Symbol.iterator]() {
    return this.entries();
  }
}

/**
 * The answer of Yoga's regular (JSON) result processor when the lean path runs it: the body string
 * and its one header, instead of a Fetch `Response` whose Headers, body and content length
 * {@link send} would read back (issue 21 item 3: the Response, its Headers object and the awaited
 * `text()` cost more than the answer's serialization). Only the processor's plain answer takes this
 * form: a string body with `Content-Type` as its only header; anything else (error headers from
 * `extensions.http.headers`, streams, empty bodies) stays a Fetch `Response` (see {@link leanFetchApi}).
 */
class JsonAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly contentType: string;
  readonly body: string;
  constructor(body: string, status: number, statusText: string | undefined, contentType: string) {
    this.body = body;
    this.status = status;
    // As whatwg-node's Response: the given text, else the code's reason phrase.
    this.statusText = statusText || STATUS_CODES[status] || 'OK';
    this.contentType = contentType;
  }
}

/** The `init` Yoga's regular result processor passes to `new fetchAPI.Response(body, init)`. */
type AnswerInit = { status?: number; statusText?: string; headers?: unknown };

/**
 * Yoga's Fetch API with a `Response` constructor that makes a {@link JsonAnswer} of a plain JSON
 * answer (string body, a plain headers object holding `Content-Type` alone) and a Fetch `Response`
 * of anything else, so every other answer is built exactly as Yoga builds it.
 */
function leanFetchApi(fetchAPI: YogaInternals['fetchAPI']): YogaInternals['fetchAPI'] {
  const FetchResponse = fetchAPI.Response;
  function Answer(body: unknown, init?: AnswerInit): JsonAnswer | Response {
    const headers = init?.headers;
    if (typeof body === 'string' && headers !== null && typeof headers === 'object') {
      const names = Object.keys(headers);
      const contentType = (headers as Record<string, unknown>)['Content-Type'];
      if (
        names.length === 1 &&
        typeof contentType === 'string' &&
        Object.getPrototypeOf(headers) === Object.prototype
      ) {
        return new JsonAnswer(body, init?.status || 200, init?.statusText, contentType);
      }
    }
    return new FetchResponse(body as BodyInit | null, init as ResponseInit);
  }
  return Object.assign(Object.create(fetchAPI) as object, {
    Response: Answer,
  }) as unknown as YogaInternals['fetchAPI'];
}

/** Whether a hook's return value is a promise (Yoga's hooks here are mostly synchronous). */
function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}

/** Yoga's body-limit error (`useLimitRequestBodySize`), word for word. */
function requestBodyTooLarge() {
  return createGraphQLError('Request body too large', {
    extensions: { http: { status: 413 }, code: 'REQUEST_ENTITY_TOO_LARGE' },
  });
}

/**
 * A `Host` value that is a plain authority: a host name, IPv4 address or bracketed IPv6 address,
 * with an optional port (RFC 9110 §7.2, without the percent-encoded and sub-delimiter characters no
 * real host name uses). Yoga builds its request URL as `http://<Host><target>`, so a Host carrying
 * `/`, `?`, `#` or `@` would move the path or add a query string.
 */
const PLAIN_HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Whether a request names its target plainly: origin-form (`/path?query`, RFC 9112 §3.2.1) and a
 * `Host` that is a plain authority (or none, HTTP/1.0). Others are answered 400 by
 * {@link createGraphqlHttpHandler} on both paths, before any URL is built from them.
 */
function hasPlainTarget(req: IncomingMessage): boolean {
  const host = req.headers.host;
  return (req.url ?? '').startsWith('/') && (host === undefined || PLAIN_HOST.test(host));
}

/** The 400 answer of a request {@link hasPlainTarget} refuses, in Yoga's error shape. */
function refuseTarget(res: ServerResponse): void {
  const body = JSON.stringify({
    errors: [
      {
        message: 'Bad Request: the request target must be a path and Host a plain host[:port]',
        extensions: { code: 'BAD_REQUEST' },
      },
    ],
  });
  res.writeHead(400, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** Accept values the lean path answers (Yoga's regular JSON result processor); others go to Yoga. */
const JSON_MEDIA_TYPES = new Set(['*/*', 'application/json', 'application/graphql-response+json']);

/**
 * Whether the lean path answers this request: `POST /graphql` with an `application/json` body, or
 * `GET /graphql?…` without a body; no `Origin` (CORS stays with Yoga); an `Accept` naming only JSON
 * media types (or none). Everything else (SSE and multipart accepts, GraphiQL, other content types,
 * form bodies CSRF prevention refuses, CORS preflights) is Yoga's.
 */
function isLean(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  const headers = req.headers;
  if (headers.origin !== undefined) return false;
  if (req.method === 'POST') {
    if (url !== '/graphql') return false;
    const type = headers['content-type'];
    if (type !== 'application/json' && type !== 'application/json; charset=utf-8') return false;
  } else if (req.method === 'GET') {
    if (!url.startsWith('/graphql?')) return false;
    if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
  } else {
    return false;
  }
  const accept = headers.accept;
  if (accept === undefined) return true;
  for (const part of accept.split(',')) {
    const [type, ...parameters] = part.split(';');
    if (!JSON_MEDIA_TYPES.has(type!.trim().toLowerCase())) return false;
    if (parameters.some((parameter) => !/^\s*(charset=utf-8|q=[\d.]+)\s*$/i.test(parameter))) return false;
  }
  return true;
}

/**
 * Whether the lean path serves this request as a shared SSE stream (src/plugins/shared-sse.ts,
 * issue 21 item 1): `Accept: text/event-stream` alone, no `Origin`, and either a `POST /graphql`
 * with a JSON body or a `GET /graphql?…` whose `query` is a live subscription (other GETs stay
 * Yoga's). The shared-SSE params handler still hands anything it cannot share to Yoga's handling.
 */
function isSharedSse(req: IncomingMessage): boolean {
  const headers = req.headers;
  if (headers.accept !== 'text/event-stream' || headers.origin !== undefined) return false;
  const url = req.url ?? '';
  if (req.method === 'POST') {
    const type = headers['content-type'];
    return url === '/graphql' && (type === 'application/json' || type === 'application/json; charset=utf-8');
  }
  if (req.method !== 'GET' || !url.startsWith('/graphql?')) return false;
  if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
  const search = new URLSearchParams(url.slice('/graphql?'.length));
  const query = search.get('query');
  if (!query) return false;
  try {
    return isShareable(parse(query), search.get('operationName') || undefined);
  } catch {
    return false;
  }
}

/**
 * Whether the lean path may serve this `/graphql/stream` request from a shared execution: graphql-sse's
 * distinct-connections mode (issue 21 item 1) with `Accept: text/event-stream` alone, no `Origin`, no
 * single-connection stream token (header or `?token=`), an `Authorization` header, and either a
 * `POST` with a JSON body of a declared length within {@link MAX_REQUEST_BODY_BYTES} or a `GET` whose
 * `query` is a live subscription. Everything else (single-connection mode, queries, resuming
 * subscriptions, bodies it cannot read as graphql-sse does) stays graphql-sse's (src/plugins/graphql-sse.ts).
 */
function isSharedStream(req: IncomingMessage): boolean {
  const headers = req.headers;
  if (headers.accept !== 'text/event-stream' || headers.origin !== undefined) return false;
  if (headers.authorization === undefined || headers['x-graphql-event-stream-token'] !== undefined)
    return false;
  const url = req.url ?? '';
  if (req.method === 'POST') {
    const type = headers['content-type'];
    const length = headers['content-length'];
    return (
      url === GRAPHQL_SSE_PATH &&
      (type === 'application/json' || type === 'application/json; charset=utf-8') &&
      headers['transfer-encoding'] === undefined &&
      length !== undefined &&
      /^\d+$/.test(length) &&
      Number(length) <= MAX_REQUEST_BODY_BYTES
    );
  }
  if (req.method !== 'GET' || !url.startsWith(`${GRAPHQL_SSE_PATH}?`)) return false;
  if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
  const search = new URLSearchParams(url.slice(GRAPHQL_SSE_PATH.length + 1));
  if (search.has('token')) return false;
  return streamParams(req, undefined) !== undefined;
}

/**
 * A distinct-connections request's parameters read as graphql-sse reads them (its `parseReq`: `GET`
 * search or `POST` JSON body; `query` a string, `variables` and `extensions` objects), when the
 * operation is a live subscription ({@link isShareable}); undefined for anything else, which
 * graphql-sse's own handler then answers as ever.
 */
function streamParams(req: IncomingMessage, body: string | undefined): GraphQLParams | undefined {
  let data: Record<string, unknown>;
  try {
    if (req.method === 'GET') {
      const search = new URLSearchParams((req.url ?? '').split('?')[1]);
      const variables = search.get('variables');
      const extensions = search.get('extensions');
      data = {
        query: search.get('query') ?? undefined,
        operationName: search.get('operationName') ?? undefined,
        variables: variables ? JSON.parse(variables) : undefined,
        extensions: extensions ? JSON.parse(extensions) : undefined,
      };
    } else {
      const parsed: unknown = JSON.parse(body ?? '');
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
      data = parsed as Record<string, unknown>;
    }
  } catch {
    return undefined;
  }
  const { query, operationName, variables, extensions } = data;
  const isObject = (value: unknown) => typeof value === 'object' && !Array.isArray(value);
  if (typeof query !== 'string') return undefined;
  if (variables != null && !isObject(variables)) return undefined;
  if (extensions != null && !isObject(extensions)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  try {
    if (!isShareable(parse(query), operationName ?? undefined)) return undefined;
  } catch {
    return undefined;
  }
  return {
    query,
    operationName: operationName ?? undefined,
    variables: (variables ?? undefined) as Record<string, unknown> | undefined,
    extensions: (extensions ?? undefined) as Record<string, unknown> | undefined,
  };
}

/**
 * The HTTP handler of `/graphql` (src/server/http.ts). With `lean` on, plain GraphQL requests
 * ({@link isLean}: JSON POST, GET) skip whatwg-node's Fetch adapter (no `Request` with a body stream,
 * no AbortSignal, no body-limit stream and its DOMException, no `Response` piping): the body is read
 * here, bounded by {@link MAX_REQUEST_BODY_BYTES} like Yoga's, and the request then runs through the
 * same Yoga hooks in the same order: request parsing hooks (content type, CSRF prevention, GET input
 * checks, body size, batching), `onParams` (persisted operations, parameter checks),
 * envelop (viewer auth and token expiry, limits, cost, execution, error masking, request ids,
 * redaction, metrics), `onExecutionResult`, and the result-processing hooks (card-data redaction,
 * request id, media type), so its answers are those of Yoga. Any other request goes to Yoga's handler.
 * On `/graphql/stream`, graphql-sse's distinct-connections live subscriptions ({@link isSharedStream})
 * are served from the shared SSE executions the same way; graphql-sse's handler answers the rest.
 * `cardgraph_graphql_http_requests_total{path}` counts requests by path (`lean`, `yoga`).
 * On both paths a request whose target is not origin-form or whose `Host` is not a plain
 * `host[:port]` is answered 400 `BAD_REQUEST` before any URL is built: Yoga builds its URL from
 * `Host`, and a Host such as `127.0.0.1?query={…}&x=` or `h/other` would otherwise change the path
 * or inject a query (issue 20 item 6). The lean path's URL is the request target alone.
 * @throws Error at startup when the Yoga members it runs are missing (a Yoga upgrade changed them) or
 *   a plugin uses Yoga's instrumentation (which only Yoga's handler applies).
 */
export function createGraphqlHttpHandler(options: {
  yoga: Yoga;
  lean: boolean;
  metrics: Metrics;
  logger: Logger;
  /**
   * Serves SSE live subscriptions from the live-subscription hub's shared executions on the lean
   * path (see {@link isSharedSse}): the hub, the token check and the SSE framing of its members.
   */
  live?: { hub: LiveHub; viewerAuth: ViewerAuth; streams: LiveSseStreams };
}): GraphqlHttpHandler {
  const { yoga, metrics, logger, live } = options;
  const requests = new Counter({
    name: 'cardgraph_graphql_http_requests_total',
    help: 'GraphQL HTTP requests by the path that answered them: lean (src/server/graphql-http.ts) or yoga.',
    labelNames: ['path'] as const,
    registers: [metrics.registry],
  });
  const viaLean = requests.labels('lean');
  const viaYoga = requests.labels('yoga');
  const yogaHandle: GraphqlHttpHandler = (req, res, record) => {
    // Yoga's URL is `http://<Host><target>`: an odd Host or target never reaches it (issue 20 item 6).
    if (!hasPlainTarget(req)) {
      record.errorCodes.add('BAD_REQUEST');
      refuseTarget(res);
      return;
    }
    viaYoga.inc();
    void yoga.handle(req, res, { requestRecord: record });
  };
  if (!options.lean) return yogaHandle;
  const internals = yogaInternals(yoga);
  const answerFetchApi = leanFetchApi(internals.fetchAPI);

  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    record: RequestRecord,
    sse = false,
  ): Promise<void> {
    const body = req.method === 'POST' ? await readBody(req) : { text: undefined, tooLarge: false };
    const request = new LeanRequest(req, body.text, body.tooLarge);
    const serverContext: Record<string, unknown> = {
      req,
      res,
      waitUntil: internals.waitUntil,
      requestRecord: record,
    };
    if (sse && live) {
      // The SSE road: the request's viewer first, then the hub serves a live subscription. A refused
      // token goes on to Yoga's handling, which answers it as ever without checking it again.
      try {
        serverContext.viewer = await live.viewerAuth.fromHeader(req.headers.authorization ?? null);
        serverContext.live = { endsAtTokenExpiry: true };
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        serverContext.viewerRefusal = error;
      }
    }
    let response: Response | JsonAnswer;
    try {
      const parsed = await internals.parseRequest(request, serverContext);
      if (parsed.response) {
        response = parsed.response;
      } else {
        const result = await yoga.getResultForParams(
          { params: parsed.requestParserResult as GraphQLParams, request: request as unknown as Request },
          serverContext,
        );
        if (live?.hub.owns(result)) {
          live.streams.serve(res, result, YOGA_SSE_HEADERS, record.id);
          return;
        }
        response = await processResult(request, result, serverContext);
      }
    } catch (error) {
      response = await processResult(request, { errors: handleError(error) }, serverContext);
    }
    await send(res, response);
  }

  /**
   * graphql-sse's distinct-connections mode on `/graphql/stream` ({@link isSharedStream}) served from
   * a shared execution: the token is checked first, as graphql-sse's `authenticate` does (a refused one
   * gets its 401 answer), the parameters are read as graphql-sse reads them, and the operation runs
   * through Yoga's `getResultForParams` (every `onParams` plugin, then the shared-SSE params handler),
   * as graphql-sse's `onSubscribe` runs it. A member is written by {@link SharedSseStreams.serve} with
   * graphql-sse's headers; a refused operation gets graphql-sse's refusal; a request graphql-sse
   * would read otherwise (not a live subscription, not JSON) goes to Yoga and graphql-sse unchanged.
   */
  async function answerStream(req: IncomingMessage, res: ServerResponse, record: RequestRecord) {
    const shared = live!;
    let viewer: Awaited<ReturnType<ViewerAuth['fromHeader']>>;
    try {
      viewer = await shared.viewerAuth.fromHeader(req.headers.authorization ?? null);
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error;
      viaLean.inc();
      const [body, init] = authRefusal(error);
      await send(res, new internals.fetchAPI.Response(body, init));
      return;
    }
    const text = req.method === 'POST' ? (await readBody(req)).text : undefined;
    const params = viewer ? streamParams(req, text) : undefined;
    if (!viewer || !params) {
      await viaGraphqlSse(req, res, record, text);
      return;
    }
    viaLean.inc();
    const request = new LeanRequest(req, text, false);
    const serverContext = {
      req,
      res,
      waitUntil: internals.waitUntil,
      requestRecord: record,
      live: { endsAtTokenExpiry: true },
      viewer,
    };
    let refused: Awaited<ReturnType<typeof operationRefusal>>;
    try {
      const result = await yoga.getResultForParams(
        { params, request: request as unknown as Request },
        serverContext as never,
      );
      if (shared.hub.owns(result)) {
        shared.streams.serve(res, result, GRAPHQL_SSE_HEADERS, record.id);
        return;
      }
      // Not a member: a request error (token, parse, validation, limits), no `data`. An iterable
      // cannot come here (a live subscription of a known viewer is always shared) and is stopped.
      if (isAsyncIterable(result)) await (result as Partial<AsyncIterator<unknown>>).return?.();
      const errors = (result as ExecutionResult | undefined)?.errors;
      refused = await operationRefusal(
        internals.fetchAPI,
        errors?.length ? { errors } : { thrown: undefined },
        logger,
      );
    } catch (error) {
      refused = await operationRefusal(internals.fetchAPI, { thrown: error }, logger);
    }
    for (const code of refused.codes) record.errorCodes.add(code);
    await send(res, refused.response);
  }

  /**
   * A `/graphql/stream` request whose body the lean path has read, answered by Yoga (graphql-sse's
   * handler) from a Fetch `Request` with that body, as Yoga's Node adapter would have built it.
   */
  async function viaGraphqlSse(
    req: IncomingMessage,
    res: ServerResponse,
    record: RequestRecord,
    body?: string,
  ) {
    viaYoga.inc();
    const headers = new internals.fetchAPI.Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    // As Yoga's Node adapter: the request's signal aborts when the client goes away, which is how
    // graphql-sse's handler learns to stop a stream.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const request = new internals.fetchAPI.Request(`http://localhost${req.url ?? '/'}`, {
      method: req.method ?? 'GET',
      headers,
      signal: gone.signal,
      ...(body !== undefined ? { body } : {}),
    });
    const response = await (yoga as unknown as { fetch(r: Request, c: object): Promise<Response> }).fetch(
      request,
      { req, res, requestRecord: record },
    );
    await send(res, response);
  }

  /** Yoga's `processResult`: the result-processing hooks choose the processor by `Accept`. */
  async function processResult(request: LeanRequest, initial: unknown, serverContext: object) {
    let result = initial;
    let processor: ResultProcessor | undefined;
    let mediaType = '*/*';
    const acceptableMediaTypes: string[] = [];
    for (const hook of internals.onResultProcessHooks) {
      // Awaited only when a hook returns a promise: no microtask per synchronous hook.
      const pending = hook({
        request,
        acceptableMediaTypes,
        result,
        setResult(next) {
          result = next;
        },
        resultProcessor: processor,
        setResultProcessor(next, type) {
          processor = next;
          mediaType = type;
        },
        serverContext,
      });
      if (isPromiseLike(pending)) await pending;
    }
    if (!processor) {
      // As Yoga (a subscription asking for JSON only), but the subscription Yoga leaves running ends.
      if (isAsyncIterable(result)) await (result as Partial<AsyncIterator<unknown>>).return?.();
      return new internals.fetchAPI.Response(null, {
        status: 406,
        statusText: 'Not Acceptable',
        headers: { accept: acceptableMediaTypes.join('; charset=utf-8, ') },
      });
    }
    return processor(result, answerFetchApi, mediaType) as Response | JsonAnswer | Promise<Response>;
  }

  /** Yoga's `handleError` for one error: masked through Yoga's masking options. */
  function handleError(error: unknown): ExecutionResult['errors'] {
    const masking = internals.maskedErrorsOpts!;
    const masked = masking.maskError(error, masking.errorMessage, masking.isDev);
    if (masked !== error) yoga.logger.error(error);
    return [
      masked instanceof Error && 'extensions' in masked
        ? (masked as never)
        : createGraphQLError(masked.message, { originalError: masked }),
    ];
  }

  return (req, res, record) => {
    if (live !== undefined && hasPlainTarget(req) && isSharedStream(req)) {
      answerStream(req, res, record).catch((error: unknown) => {
        if (req.destroyed && !req.complete) return;
        logger.error({ err: error }, 'lean graphql-sse path failed');
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
      return;
    }
    const sse = live !== undefined && hasPlainTarget(req) && isSharedSse(req);
    if (!sse && (!hasPlainTarget(req) || !isLean(req))) {
      yogaHandle(req, res, record);
      return;
    }
    viaLean.inc();
    answer(req, res, record, sse).catch((error: unknown) => {
      // A client that went away mid-body is the access line's 499, not a gateway failure.
      if (req.destroyed && !req.complete) return;
      logger.error({ err: error }, 'lean GraphQL path failed');
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  };
}

/** Yoga's server members the lean path runs, checked (see {@link YogaInternals}). */
function yogaInternals(yoga: Yoga): YogaInternals {
  const internals = yoga as unknown as YogaInternals;
  const missing = [
    typeof internals.parseRequest !== 'function' && 'parseRequest',
    typeof internals.getResultForParams !== 'function' && 'getResultForParams',
    !Array.isArray(internals.onResultProcessHooks) && 'onResultProcessHooks',
    (typeof internals.maskedErrorsOpts?.maskError !== 'function' && 'maskedErrorsOpts') || false,
    typeof internals.waitUntil !== 'function' && 'waitUntil',
    internals.fetchAPI === undefined && 'fetchAPI',
  ].filter(Boolean);
  if (missing.length > 0) {
    throw new Error(
      `lean GraphQL path: Yoga ${(yoga as unknown as { version?: string }).version ?? '?'} lacks ${missing.join(', ')}; set GRAPHQL_LEAN_HTTP=off or update src/server/graphql-http.ts`,
    );
  }
  if (internals.instrumentation) {
    throw new Error(
      'lean GraphQL path: a plugin uses Yoga instrumentation, which only Yoga’s handler applies',
    );
  }
  return internals;
}

/** The request body as UTF-8, or `tooLarge` once more than {@link MAX_REQUEST_BODY_BYTES} arrived. */
async function readBody(req: IncomingMessage): Promise<{ text: string | undefined; tooLarge: boolean }> {
  const declared = req.headers['content-length'];
  // A declared length over the limit (or malformed) is refused by Yoga's own hook before any read.
  if (declared !== undefined && (!/^\d+$/.test(declared) || Number(declared) > MAX_REQUEST_BODY_BYTES)) {
    return { text: undefined, tooLarge: false };
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      chunks.push(chunk);
      if (size <= MAX_REQUEST_BODY_BYTES) return;
      // Answered now; the rest of the body is read and dropped.
      tooLarge = true;
      chunks.length = 0;
      resolve({ text: undefined, tooLarge });
    });
    req.once('end', () => {
      if (!tooLarge) resolve({ text: Buffer.concat(chunks).toString('utf8'), tooLarge });
    });
    req.once('error', reject);
  });
}

/**
 * Writes a Fetch `Response` of Yoga's result processors to the Node response: a JSON answer in one
 * write; a stream (a subscription over SSE or multipart when the request's `Accept` allows it) chunk
 * by chunk, cancelled when the client goes away.
 */
async function send(res: ServerResponse, response: Response | JsonAnswer): Promise<void> {
  if (res.destroyed || res.writableEnded) return;
  if (response instanceof JsonAnswer) {
    // The headers a Fetch Response of this answer carries, in its order (lowercase names).
    res.setHeader('content-type', response.contentType);
    const length = Buffer.byteLength(response.body);
    if (length > 0) res.setHeader('content-length', length);
    res.writeHead(response.status, response.statusText);
    res.end(response.body);
    return;
  }
  const streaming = response.headers.get('content-type')?.startsWith('application/') !== true;
  const body = streaming ? undefined : await response.text();
  response.headers.forEach((value, name) => {
    res.setHeader(name, value);
  });
  res.writeHead(response.status, response.statusText);
  if (!streaming || !response.body) {
    res.end(body);
    return;
  }
  const reader = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done || res.destroyed) break;
    if (!res.write(value)) {
      await new Promise((resolve) => {
        res.once('drain', resolve);
        res.once('close', resolve);
      });
    }
  }
  res.end();
}
