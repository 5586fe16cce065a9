import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ExecutionResult, GraphQLError, parse } from 'graphql';
import {
  type GraphQLParams,
  getSSEProcessor,
  isAsyncIterable,
  processRegularResult,
  type YogaServerInstance,
} from 'graphql-yoga';
import { Counter } from 'prom-client';
import type { GraphQLContext } from '../context.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { RequestRecord } from '../lib/request-record.ts';
import {
  errorsAnswer,
  INTERNAL_ERROR_MESSAGE,
  internalError,
  readRequestBody,
  refusal,
  writeJsonAnswer,
} from '../lib/transport-errors.ts';
import type { LiveHub } from '../live/hub.ts';
import { isShareable } from '../live/shared-execution.ts';
import { redactRequestResult } from '../plugins/card-data-redaction.ts';
import { useErrorMasking } from '../plugins/error-masking.ts';
import { GRAPHQL_SSE_PATH } from '../plugins/graphql-sse.ts';
import { authRefusal, operationRefusal } from '../plugins/graphql-sse-answers.ts';
import { stampRequestId } from '../plugins/request-id.ts';
import { checkSearchParameters } from '../plugins/request-input.ts';
import type { ViewerAuth } from '../plugins/viewer-auth.ts';
import { MAX_REQUEST_BODY_BYTES, type ServerContext } from '../runtime/index.ts';
import { GRAPHQL_SSE_HEADERS, type LiveSseStreams, YOGA_SSE_HEADERS } from './live-sse.ts';

/**
 * Answers one request on `/graphql`: the lean path when it applies, else Yoga's own handling.
 * @returns nothing; the response is written (or Yoga's handler was started) when it returns.
 */
export type GraphqlHttpHandler = (req: IncomingMessage, res: ServerResponse, record: RequestRecord) => void;

type Yoga = YogaServerInstance<ServerContext, GraphQLContext>;

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
const TARGET_REFUSED = errorsAnswer([
  refusal('BAD_REQUEST', 'Bad Request: the request target must be a path and Host a plain host[:port]'),
]);

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
 * Whether the lean path serves this request as a shared SSE stream (src/live/hub.ts, src/server/live-sse.ts,
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
 * A lean request's GraphQL parameters, read as Yoga's GET and JSON POST parsers read them (its
 * messages and codes, so both paths answer alike), or the refusal of a request they cannot be read
 * from; undefined when the client went away before its body ended.
 */
async function readParams(
  req: IncomingMessage,
): Promise<{ params: GraphQLParams } | { refused: GraphQLError } | undefined> {
  const url = req.url ?? '/';
  if (req.method === 'GET') {
    const search = new URLSearchParams(url.slice(url.indexOf('?') + 1));
    try {
      checkSearchParameters(search);
    } catch (error) {
      return { refused: error as GraphQLError };
    }
    const variables = search.get('variables') || undefined;
    const extensions = search.get('extensions') || undefined;
    return {
      params: {
        operationName: search.get('operationName') || undefined,
        query: search.get('query') || undefined,
        variables: variables ? JSON.parse(variables) : undefined,
        extensions: extensions ? JSON.parse(extensions) : undefined,
      },
    };
  }
  const body = await readRequestBody(req, MAX_REQUEST_BODY_BYTES);
  if (!body.ok) {
    return body.reason === 'aborted'
      ? undefined
      : { refused: refusal('REQUEST_ENTITY_TOO_LARGE', 'Request body too large') };
  }
  const text = body.body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const { name, message } = error as Error;
    // Yoga's words, with the parser's message as whatwg-node words it (it quotes the body; the
    // card-data redaction masks it, as on Yoga's path).
    return {
      refused: new GraphQLError('POST body sent invalid JSON.', {
        extensions: {
          http: { spec: true, status: 400 },
          code: 'BAD_REQUEST',
          originalError: { name, message: `${message}, "${text}" is not valid JSON` },
        },
      }),
    };
  }
  if (value === null || typeof value !== 'object') {
    const received = value === null ? 'null' : typeof value;
    return { refused: refusal('BAD_REQUEST', `POST body is expected to be object but received ${received}`) };
  }
  // Batching is off (Yoga's default): an array is refused as Yoga refuses it.
  if (Array.isArray(value)) return { refused: refusal('BAD_REQUEST', 'Batching is not supported.') };
  return { params: value as GraphQLParams };
}

/** What {@link negotiate} answers for a request without `Accept` (read as `*` + `/*`). */
const ANY_MEDIA_TYPE = Object.freeze({ mediaType: 'application/json', sse: true, listed: 1 });

/**
 * The media type of a lean request's JSON answer, as Yoga's content negotiation chooses it among the
 * JSON types {@link isLean} lets through: the first listed (`*` + `/*` or none: `application/json`).
 * `sse`: whether a stream may be answered as SSE (the `Accept` allows any type).
 */
function negotiate(accept: string | undefined): { mediaType: string; sse: boolean; listed: number } {
  // No `Accept` reads as `*/*`: its answer is a constant, nothing to split per request.
  if (accept === undefined) return ANY_MEDIA_TYPE;
  const listed = accept
    .replace(/\s/g, '')
    .toLowerCase()
    .split(',')
    .map((part) => part.split(';')[0]!);
  const first = listed[0]!;
  return {
    mediaType: first === '*/*' ? 'application/json' : first,
    sse: listed.includes('*/*'),
    listed: listed.length,
  };
}

/**
 * A Fetch `Request` for Yoga's hooks (viewer auth reads `Authorization`, mutation-over-GET checks
 * read the method) of a Node request whose body the lean path has read: its URL from the request
 * target alone, never the `Host` header (a client's Host cannot add a query string or change the
 * path; {@link hasPlainTarget}). Its headers are Node's header object itself, as Yoga's Node adapter
 * passes it (`@whatwg-node/server`): the Fetch `Headers` reads a name from it when asked, instead of
 * a copy of every header per request; a header the request writes (none on this path) goes to the
 * `Headers`' own copy, never to the Node object.
 */
function fetchRequest(yoga: Yoga, req: IncomingMessage): Request {
  return new yoga.fetchAPI.Request(`http://localhost${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    // Node's values are strings but for `set-cookie` (an array), which the Fetch Headers reads as
    // Yoga's adapter hands it over.
    headers: req.headers as Record<string, string>,
  });
}

/**
 * The HTTP handler of `/graphql` (src/server/http.ts). With `lean` on, plain GraphQL requests
 * ({@link isLean}: JSON POST, GET) skip whatwg-node's Fetch adapter and Yoga's request parsing: the
 * body is read here ({@link readRequestBody}, bounded by {@link MAX_REQUEST_BODY_BYTES} like Yoga's),
 * the parameters are read as Yoga reads them ({@link readParams}), and the operation runs through
 * Yoga's public `getResultForParams` (as Hive Gateway runs its transports): `onParams` (persisted
 * operations, parameter checks), envelop (viewer auth and token expiry, limits, cost, execution,
 * error masking) and `onExecutionResult` (card-data redaction, request ids, field suggestions). The
 * answer is Yoga's public `processRegularResult` (or its SSE processor for a subscription asked
 * for without a JSON-only `Accept`), so its status, headers and body are those of Yoga. A request
 * refused before it has parameters, and an error `getResultForParams` throws, are the same errors
 * Yoga's handling gives, masked with the same masking ({@link useErrorMasking}), redacted and
 * stamped with the request id by the same functions the plugins use. Any other request goes to
 * Yoga's handler. On `/graphql/stream`, graphql-sse's distinct-connections live subscriptions
 * ({@link isSharedStream}) are served from the shared SSE executions the same way; graphql-sse's
 * handler answers the rest. `cardgraph_graphql_http_requests_total{path}` counts requests by path
 * (`lean`, `yoga`). On both paths a request whose target is not origin-form or whose `Host` is not a
 * plain `host[:port]` is answered 400 `BAD_REQUEST` before any URL is built: Yoga builds its URL from
 * `Host`, and a Host such as `127.0.0.1?query={…}&x=` or `h/other` would otherwise change the path
 * or inject a query. A failure of the lean path itself is answered 500 `internal-error` (and logged).
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
    // Yoga's URL is `http://<Host><target>`: an odd Host or target never reaches it.
    if (!hasPlainTarget(req)) {
      record.errorCodes.add('BAD_REQUEST');
      writeJsonAnswer(res, TARGET_REFUSED);
      return;
    }
    viaYoga.inc();
    void yoga.handle(req, res, { requestRecord: record });
  };
  if (!options.lean) return yogaHandle;
  const { maskError } = useErrorMasking();
  const sseProcessor = getSSEProcessor();

  /**
   * Errors that never became a result of `getResultForParams`: masked as Yoga masks what its
   * handling catches (a masked error is logged), then redacted and stamped with the request id.
   */
  function outsideExecution(thrown: unknown, serverContext: object): ExecutionResult {
    const errors = (
      thrown !== null && typeof thrown === 'object' && 'errors' in thrown && Array.isArray(thrown.errors)
        ? thrown.errors
        : [thrown]
    ).map((error: unknown) => {
      const masked = maskError!(error, INTERNAL_ERROR_MESSAGE);
      if (masked !== error) yoga.logger.error(error);
      return masked instanceof GraphQLError ? masked : internalError();
    });
    return stampRequestId(redactRequestResult({ errors }), serverContext);
  }

  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    record: RequestRecord,
    sse = false,
  ): Promise<void> {
    const read = await readParams(req);
    // The client went away in the middle of its body: the access line's 499, nothing to answer.
    if (read === undefined) return;
    const request = fetchRequest(yoga, req);
    const serverContext: Record<string, unknown> = { req, res, requestRecord: record };
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
    let result: unknown;
    if ('refused' in read) {
      result = outsideExecution(read.refused, serverContext);
    } else {
      try {
        result = await yoga.getResultForParams({ params: read.params, request }, serverContext);
      } catch (error) {
        result = outsideExecution(error, serverContext);
      }
      if (live?.hub.owns(result)) {
        live.streams.serve(res, result, YOGA_SSE_HEADERS, record.id);
        return;
      }
    }
    // An SSE request the shared streams did not take (a refusal, a subscription they do not share):
    // Yoga's SSE processor, which frames one result as a stream of one event too.
    if (sse) {
      await send(res, await sseProcessor(result as never, yoga.fetchAPI, 'text/event-stream'));
      return;
    }
    const { mediaType, sse: streamable, listed } = negotiate(req.headers.accept);
    // The SSE road (`Accept: text/event-stream` alone) streams whatever is not a hub member, a
    // single result too (`next`, then `complete`), as Yoga's SSE processor answers it.
    if (sse || isAsyncIterable(result)) {
      if (sse || streamable) {
        await send(res, await sseProcessor(result as never, yoga.fetchAPI, 'text/event-stream'));
        return;
      }
      // A subscription asking for JSON only: Yoga's 406, naming what it could have streamed. The
      // subscription Yoga leaves running ends here.
      await (result as Partial<AsyncIterator<unknown>>).return?.();
      await send(
        res,
        new yoga.fetchAPI.Response(null, {
          status: 406,
          statusText: 'Not Acceptable',
          headers: { accept: Array(listed).fill('text/event-stream').join('; charset=utf-8, ') },
        }),
      );
      return;
    }
    await send(res, processRegularResult(result as ExecutionResult, yoga.fetchAPI, mediaType));
  }

  /**
   * graphql-sse's distinct-connections mode on `/graphql/stream` ({@link isSharedStream}) served from
   * a shared execution: the token is checked first, as graphql-sse's `authenticate` does (a refused one
   * gets its 401 answer), the parameters are read as graphql-sse reads them, and the operation runs
   * through Yoga's `getResultForParams` (every `onParams` plugin, then the shared-SSE params handler),
   * as graphql-sse's `onSubscribe` runs it. A member is written by {@link LiveSseStreams.serve} with
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
      await send(res, new yoga.fetchAPI.Response(body, init));
      return;
    }
    let text: string | undefined;
    if (req.method === 'POST') {
      const body = await readRequestBody(req, MAX_REQUEST_BODY_BYTES);
      if (!body.ok) return;
      text = body.body.toString('utf8');
    }
    const params = viewer ? streamParams(req, text) : undefined;
    if (!viewer || !params) {
      await viaGraphqlSse(req, res, record, text);
      return;
    }
    viaLean.inc();
    const request = fetchRequest(yoga, req);
    const serverContext = { req, res, requestRecord: record, live: { endsAtTokenExpiry: true }, viewer };
    let refused: ReturnType<typeof operationRefusal>;
    try {
      const result = await yoga.getResultForParams({ params, request }, serverContext);
      if (shared.hub.owns(result)) {
        shared.streams.serve(res, result, GRAPHQL_SSE_HEADERS, record.id);
        return;
      }
      // Not a member: a request error (token, parse, validation, limits), no `data`. An iterable
      // cannot come here (a live subscription of a known viewer is always shared) and is stopped.
      if (isAsyncIterable(result)) await (result as Partial<AsyncIterator<unknown>>).return?.();
      const errors = (result as ExecutionResult | undefined)?.errors;
      refused = operationRefusal(yoga.fetchAPI, errors?.length ? { errors } : { thrown: undefined }, logger);
    } catch (error) {
      refused = operationRefusal(yoga.fetchAPI, { thrown: error }, logger);
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
    const headers = new yoga.fetchAPI.Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    // As Yoga's Node adapter: the request's signal aborts when the client goes away, which is how
    // graphql-sse's handler learns to stop a stream.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const request = new yoga.fetchAPI.Request(`http://localhost${req.url ?? '/'}`, {
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

  /** A failure of the lean path itself: logged, answered 500 `internal-error` while nothing was sent. */
  function failed(req: IncomingMessage, res: ServerResponse, error: unknown, message: string): void {
    // A client that went away mid-body is the access line's 499, not a gateway failure.
    if (req.destroyed && !req.complete) return;
    logger.error({ err: error }, message);
    if (!res.headersSent) writeJsonAnswer(res, errorsAnswer([internalError()]));
    else res.destroy();
  }

  return (req, res, record) => {
    // Read once: every lean road needs a plain target (Yoga's road checks it again itself).
    const plain = hasPlainTarget(req);
    if (plain && live !== undefined && isSharedStream(req)) {
      answerStream(req, res, record).catch((error: unknown) =>
        failed(req, res, error, 'lean graphql-sse path failed'),
      );
      return;
    }
    const sse = plain && live !== undefined && isSharedSse(req);
    if (!sse && (!plain || !isLean(req))) {
      yogaHandle(req, res, record);
      return;
    }
    viaLean.inc();
    answer(req, res, record, sse).catch((error: unknown) =>
      failed(req, res, error, 'lean GraphQL path failed'),
    );
  };
}

/**
 * Writes a Fetch `Response` of Yoga's result processors to the Node response: a JSON answer in one
 * write; a stream (a subscription over SSE) chunk by chunk, cancelled when the client goes away.
 */
async function send(res: ServerResponse, response: Response): Promise<void> {
  if (res.destroyed || res.writableEnded) return;
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
