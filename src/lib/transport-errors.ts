import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import { GraphQLError } from 'graphql';

/**
 * The transport error model: every refusal a transport answers before (or instead of) running an
 * operation, the one internal error, and the one body reader and JSON writer of every HTTP road
 * (`/graphql` lean and Yoga, `/graphql/stream`, the webhook receiver, health and metrics). Lives in
 * lib so that server, live transports and plugins all import it without a cycle.
 *
 * **Casing rule for `extensions.code`.** Every code the gateway coins is kebab-case
 * (`internal-error`, `csrf-header-required`, `too-many-subscriptions`), the casing of the typed
 * gateway errors (src/errors.ts) and of the provider's own codes. UPPER_SNAKE_CASE is kept only for
 * the codes the GraphQL server stack defines and clients match verbatim: Yoga's request-reading
 * refusals (`BAD_REQUEST`, `REQUEST_ENTITY_TOO_LARGE`), Yoga's names of graphql-js stages
 * (`GRAPHQL_PARSE_FAILED`, `GRAPHQL_VALIDATION_FAILED`, `BAD_USER_INPUT`) and automatic persisted
 * queries (`PERSISTED_QUERY_NOT_FOUND`, with its sibling `PERSISTED_QUERY_MISMATCH`): exactly the
 * members of {@link PROTOCOL_CODES}. A refusal the gateway adds for a kind of failure that has a
 * protocol code (an unreadable target, body or search parameter is `BAD_REQUEST`) uses that code, so
 * a client sees one code per kind of refusal whichever layer refused. {@link isWellCasedCode} states
 * the rule as code; test/gateway/transport-errors.test.ts holds every refusal to it.
 *
 * **Internal error.** Anything that is not a client's mistake and not a typed gateway error is
 * answered as {@link internalError}: message `Unexpected error.`, code `internal-error`, on every
 * transport; over HTTP a request that fails with it and has no `data` is a 500 (a field that fails
 * with it beside other data is a 200 with partial data, GraphQL over HTTP's rule for
 * `application/json`). What failed is logged, never sent.
 */

/** The internal error's code on every transport (formerly Yoga's `INTERNAL_SERVER_ERROR` over HTTP). */
export const INTERNAL_ERROR_CODE = 'internal-error';

/** The internal error's message: says nothing of what failed. */
export const INTERNAL_ERROR_MESSAGE = 'Unexpected error.';

/**
 * The UPPER_SNAKE_CASE codes the gateway answers, each defined by the GraphQL server stack (see the
 * casing rule in this module's docstring). No other upper-case code is answered.
 */
export const PROTOCOL_CODES: ReadonlySet<string> = new Set([
  'BAD_REQUEST',
  'REQUEST_ENTITY_TOO_LARGE',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_MISMATCH',
]);

const KEBAB_CASE = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** Whether `code` follows the casing rule: kebab-case, or one of {@link PROTOCOL_CODES}. */
export function isWellCasedCode(code: string): boolean {
  return KEBAB_CASE.test(code) || PROTOCOL_CODES.has(code);
}

/**
 * The refusals of the transports: code → HTTP status. A refusal is the client's mistake or a limit
 * (4xx, or 503 while the gateway cannot serve); it is answered with its code and a message naming
 * what to change, never quoting the client's input. Transports that are not HTTP (graphql-ws) send
 * the same code in the error and keep the status only for their close codes' choice.
 */
export const REFUSALS = {
  /** The request target, body, JSON or a search parameter cannot be read as GraphQL parameters. */
  BAD_REQUEST: 400,
  /** The body is larger than `MAX_REQUEST_BODY_BYTES`. */
  REQUEST_ENTITY_TOO_LARGE: 413,
  /** An automatic persisted query sent by hash alone that the gateway does not hold. */
  PERSISTED_QUERY_NOT_FOUND: 404,
  /** A persisted query whose hash does not match its text. */
  PERSISTED_QUERY_MISMATCH: 400,
  /** A body type GraphQL is not read from (forms, uploads), or not JSON where JSON is required. */
  'unsupported-media-type': 415,
  /** A non-preflighted request type without a CSRF header. */
  'csrf-header-required': 403,
  /** No token where one is required. */
  unauthenticated: 401,
  /** A token that cannot be verified. */
  'invalid-token': 401,
  /** A token whose `exp` has passed. */
  'token-expired': 401,
  /** An HTTP method the endpoint does not answer (a mutation over GET). */
  'method-not-allowed': 405,
  /** An `Accept` the endpoint cannot answer. */
  'not-acceptable': 406,
  /** More subscriptions on one connection or stream than allowed. */
  'too-many-subscriptions': 429,
  /** More open connections from one client address than allowed. */
  'too-many-connections': 429,
  /** The gateway is shutting down or a dependency is unavailable. */
  'service-unavailable': 503,
} as const satisfies Record<string, number>;

/** A code of {@link REFUSALS}. */
export type RefusalCode = keyof typeof REFUSALS;

/**
 * A refusal as a GraphQLError: `extensions.code` and `extensions.http.status` (Yoga and
 * {@link errorsAnswer} read the status from it and never send it).
 * @param message for the client: what to change; never the client's input.
 * @param headers response headers to add over HTTP (e.g. `Allow`, `Retry-After`).
 */
export function refusal(code: RefusalCode, message: string, headers?: Record<string, string>): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code, http: { status: REFUSALS[code], ...(headers ? { headers } : {}) } },
  });
}

/**
 * The internal error (see this module's docstring): `Unexpected error.`, code `internal-error`,
 * marked `unexpected` so a result without `data` is answered 500 over HTTP (Yoga's rule; the marker
 * is not sent over HTTP).
 * @param location the failed field's path and AST nodes, when a field failed.
 */
export function internalError(location?: Pick<GraphQLError, 'path' | 'nodes' | 'source' | 'positions'>) {
  return new GraphQLError(INTERNAL_ERROR_MESSAGE, {
    ...(location?.nodes ? { nodes: location.nodes } : {}),
    ...(location?.source ? { source: location.source } : {}),
    ...(location?.positions ? { positions: location.positions } : {}),
    ...(location?.path ? { path: location.path } : {}),
    extensions: { code: INTERNAL_ERROR_CODE, unexpected: true },
  });
}

/** Whether `error` is the internal error (its code is {@link INTERNAL_ERROR_CODE}). */
export function isInternalError(error: unknown): boolean {
  return error instanceof GraphQLError && error.extensions?.code === INTERNAL_ERROR_CODE;
}

/** A JSON answer ready to write: status, reason phrase, headers (lowercase names) and body text. */
export interface JsonAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON text (UTF-8 when written). */
  readonly body: string;
}

/** The content type of every JSON answer the gateway writes (GraphQL errors, health, receipts). */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * A JSON answer of `value`.
 * @param headers added after `content-type` (a `content-type` here replaces it).
 */
export function jsonAnswer(status: number, value: unknown, headers: Record<string, string> = {}): JsonAnswer {
  return {
    status,
    statusText: STATUS_CODES[status] ?? '',
    headers: { 'content-type': JSON_CONTENT_TYPE, ...headers },
    body: JSON.stringify(value),
  };
}

/**
 * The GraphQL-over-HTTP answer of errors raised before execution (refusals, or the internal error):
 * body `{"errors":[{message, locations?, extensions}]}` without the internal `http` and `unexpected`
 * extensions; status the highest `extensions.http.status` among them, else 500 when any is the
 * internal error (or not a GraphQLError: it is answered as the internal error), else 400; headers of
 * `extensions.http.headers` added.
 */
export function errorsAnswer(errors: readonly unknown[]): JsonAnswer {
  let status = 0;
  let internal = false;
  const headers: Record<string, string> = {};
  const body = errors.map((raw) => {
    const error = raw instanceof GraphQLError ? raw : internalError();
    const { http, unexpected, ...extensions } = (error.extensions ?? {}) as {
      http?: { status?: number; headers?: Record<string, string> };
      unexpected?: unknown;
      [key: string]: unknown;
    };
    if (http?.status && http.status > status) status = http.status;
    if (http?.headers) {
      for (const [name, value] of Object.entries(http.headers)) headers[name.toLowerCase()] = value;
    }
    if (unexpected || extensions.code === INTERNAL_ERROR_CODE) internal = true;
    return {
      message: error.message,
      ...(error.locations ? { locations: error.locations } : {}),
      ...(error.path ? { path: error.path } : {}),
      ...(Object.keys(extensions).length > 0 ? { extensions } : {}),
    };
  });
  return jsonAnswer(status || (internal ? 500 : 400), { errors: body }, headers);
}

/**
 * Writes `answer` to a Node response in one write, with its `content-length`; nothing when the
 * response has ended or its client is gone. Headers set on `res` before (e.g. `x-request-id`) stay.
 */
export function writeJsonAnswer(res: ServerResponse, answer: JsonAnswer): void {
  if (res.destroyed || res.writableEnded || res.headersSent) return;
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.setHeader('content-length', Buffer.byteLength(answer.body));
  res.writeHead(answer.status, answer.statusText || undefined);
  res.end(answer.body);
}

/** Writes `value` as JSON with `status`, never cached (`cache-control: no-store`); see {@link writeJsonAnswer}. */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  writeJsonAnswer(res, jsonAnswer(status, value, { 'cache-control': 'no-store', ...headers }));
}

/**
 * A request body read by {@link readRequestBody}: its bytes, or why there are none: `too-large` (declared or
 * sent beyond the limit; the rest is read and dropped, so the connection can answer), `aborted`
 * (the client went away or the stream failed before its end).
 */
export type RequestBody = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' | 'aborted' };

/**
 * The one body reader of every HTTP road: collects a request's bytes up to `limitBytes`. A declared
 * `content-length` over the limit is refused before any byte is read; past the limit, what was
 * collected is dropped and the rest is discarded unread, so memory stays bounded whatever the client
 * sends. Never rejects.
 */
export function readRequestBody(req: IncomingMessage, limitBytes: number): Promise<RequestBody> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limitBytes) {
    req.resume();
    return Promise.resolve({ ok: false, reason: 'too-large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        cleanup();
        chunks.length = 0;
        req.resume();
        resolve({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve({ ok: true, body: Buffer.concat(chunks, size) });
    };
    const onAbort = () => {
      cleanup();
      resolve({ ok: false, reason: 'aborted' });
    };
    // A request stream closes after `end` when complete; a close without it is a client gone.
    const onClose = () => {
      if (!req.complete) onAbort();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}
