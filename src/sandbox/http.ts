import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { errorObject } from '../contracts/common.ts';
import { SCOPES as CONTRACT_SCOPES } from '../contracts/oauth.ts';

/**
 * Small HTTP helpers of the embedded sandbox: body reading with a size limit, JSON / JSON:API answers,
 * error bodies in the shape of sandbox contract §3, bearer-token authentication with scope checks, and
 * a tiny router. No web framework.
 */

/** Media type of the card interface and organization members areas (spec, area table). */
export const JSON_API_MEDIA_TYPE = 'application/vnd.api+json';
/** Media type of account updater v1, network tokens and card attributes. */
export const JSON_MEDIA_TYPE = 'application/json';
/** Largest accepted request body: 1 MiB; larger bodies answer 413 `payload-too-large`. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** One JSON:API error object of contract §3 (src/contracts/common.ts, `errorObject`). */
export type ErrorObject = z.input<typeof errorObject>;

/**
 * An error answer. Thrown by handlers and helpers; the server turns it into
 * `{"errors":[…]}` in the area's media type. `message` is the first detail (safe to log: no card data).
 */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;
  readonly errors: ErrorObject[];
  /** Extra response headers, e.g. `WWW-Authenticate` or `Allow`. */
  readonly headers: Record<string, string>;

  /**
   * @param status HTTP status (4xx/5xx).
   * @param errors one or more error objects (their `status` should equal `String(status)`).
   * @param headers extra response headers.
   */
  constructor(status: number, errors: ErrorObject[], headers: Record<string, string> = {}) {
    super(errors[0]?.detail ?? `HTTP ${status}`);
    this.status = status;
    this.errors = errors;
    this.headers = headers;
  }
}

/**
 * Builds an {@link HttpError} with one error object.
 * @param pointer JSON pointer for `source.pointer`, when the error concerns one request member.
 */
export function httpError(
  status: number,
  code: string,
  detail: string,
  options: { pointer?: string; headers?: Record<string, string> } = {},
): HttpError {
  const error: ErrorObject = { status: String(status), code, detail };
  if (options.pointer !== undefined) error.source = { pointer: options.pointer };
  return new HttpError(status, [error], options.headers);
}

/** 400 `bad-request` naming a field (never its value), with its JSON pointer. */
export function badRequest(detail: string, pointer?: string): HttpError {
  return httpError(400, 'bad-request', detail, pointer === undefined ? {} : { pointer });
}

/** Media type without parameters, lower case (`application/json; charset=utf-8` → `application/json`). */
function bareMediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Reads the raw request body.
 * @param limitBytes maximum size in bytes (default {@link MAX_BODY_BYTES}).
 * @throws HttpError 413 `payload-too-large` when the body (or its declared length) exceeds the limit.
 */
export async function readRawBody(req: IncomingMessage, limitBytes = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    req.resume();
    throw httpError(413, 'payload-too-large', `request body exceeds ${limitBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      req.resume();
      throw httpError(413, 'payload-too-large', `request body exceeds ${limitBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Reads and parses a JSON request body.
 * @param mediaType the area's media type; a body with another `Content-Type` answers 415
 *   `unsupported-media-type`.
 * @returns the parsed value (any JSON).
 * @throws HttpError 413 (too large), 415 (wrong media type), 400 `bad-request` (empty or malformed JSON;
 *   the detail never echoes the body).
 */
export async function readJsonBody(req: IncomingMessage, mediaType: string): Promise<unknown> {
  const given = bareMediaType(req.headers['content-type']);
  if (given !== mediaType) {
    req.resume();
    throw httpError(415, 'unsupported-media-type', `Content-Type must be ${mediaType}`);
  }
  const raw = await readRawBody(req);
  if (raw.length === 0) throw badRequest('request body is empty', '');
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw badRequest('request body is not valid JSON', '');
  }
}

/**
 * Reads a JSON request body (see {@link readJsonBody}) and validates it with `schema`.
 * @returns the schema's output.
 * @throws HttpError as {@link readJsonBody}, and 400 `bad-request` with one error per failed rule,
 *   pointers from the body's root (see {@link validationError}).
 */
export async function readValidJsonBody<S extends z.ZodType>(
  req: IncomingMessage,
  mediaType: string,
  schema: S,
): Promise<z.output<S>> {
  const parsed = schema.safeParse(await readJsonBody(req, mediaType));
  if (!parsed.success) throw validationError(parsed.error.issues, '');
  return parsed.data;
}

/**
 * Reads and parses an `application/x-www-form-urlencoded` body (the OAuth token endpoint, contract §2).
 * @returns the form fields; a repeated field keeps its first value.
 * @throws HttpError 413 when too large; `undefined` is returned for another media type so the caller
 *   can answer in its own (OAuth) error form.
 */
export async function readFormBody(req: IncomingMessage): Promise<Map<string, string> | undefined> {
  if (bareMediaType(req.headers['content-type']) !== 'application/x-www-form-urlencoded') {
    req.resume();
    return undefined;
  }
  const raw = await readRawBody(req);
  const fields = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) {
    if (!fields.has(key)) fields.set(key, value);
  }
  return fields;
}

/**
 * Sends a JSON body. Does nothing when the response is already finished or its socket is gone.
 * @param body serialised with `JSON.stringify`, or sent as is when already a string.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  mediaType: string,
  headers: Record<string, string> = {},
): void {
  if (res.writableEnded || res.destroyed) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': mediaType,
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/** Sends `204 No Content`. */
export function sendNoContent(res: ServerResponse): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(204, { 'cache-control': 'no-store' });
  res.end();
}

/** Sends an {@link HttpError} as `{"errors":[…]}` (contract §3) in the given media type. */
export function sendError(res: ServerResponse, error: HttpError, mediaType: string): void {
  sendJson(res, error.status, { errors: error.errors }, mediaType, error.headers);
}

/** OAuth 2.0 scopes of contract §2. */
export const SCOPES = CONTRACT_SCOPES;

/** One scope name of {@link SCOPES}. */
export type Scope = (typeof SCOPES)[number];

/** Who is calling: the vault (tenant) of the token and its granted scopes. */
export interface AuthContext {
  vault: string;
  scopes: ReadonlySet<string>;
}

/** Looks a bearer token up; `undefined` for an unknown or expired token. */
export type TokenResolver = (token: string) => AuthContext | undefined;

/**
 * Checks `Authorization: Bearer <token>` and the scope (gap decisions, "Common").
 * @throws HttpError 401 `unauthorized` with `WWW-Authenticate: Bearer` (missing, malformed, unknown or
 *   expired token); 403 `forbidden` when the token lacks `scope`.
 */
export function authenticate(req: IncomingMessage, resolve: TokenResolver, scope: Scope): AuthContext {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header.trim());
  const auth = match ? resolve(match[1]!) : undefined;
  if (!auth) {
    const error = match ? 'error="invalid_token"' : 'realm="sandbox"';
    throw httpError(401, 'unauthorized', 'missing, invalid or expired access token', {
      headers: { 'www-authenticate': `Bearer ${error}` },
    });
  }
  if (!auth.scopes.has(scope)) {
    throw httpError(403, 'forbidden', `the access token lacks the scope ${scope}`);
  }
  return auth;
}

/** What a handler receives. `params` holds the decoded `:name` path segments. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  /** Path without the query string. */
  path: string;
  /** Set by the router once a bearer token is accepted; read by the request log. */
  log: { vault?: string };
}

/** A handler of a route that required a token: `auth` is the checked caller. */
export type AuthedHandler = (ctx: RequestContext & { auth: AuthContext }) => Promise<void> | void;
/** A handler of a public route (token endpoint, sandbox admin listing). */
export type PublicHandler = (ctx: RequestContext) => Promise<void> | void;

interface Route {
  method: string;
  segments: string[];
  run: PublicHandler;
}

/** Outcome of {@link Router.match}. */
export type RouteMatch =
  | { kind: 'found'; run: PublicHandler; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

/**
 * Method + path router. Patterns are absolute paths whose `:name` segments match one non-empty path
 * segment (percent-decoded into `params.name`).
 */
export class Router {
  readonly #routes: Route[] = [];
  readonly #resolve: TokenResolver;

  /** @param resolve token lookup used by routes added with {@link Router.add}. */
  constructor(resolve: TokenResolver) {
    this.#resolve = resolve;
  }

  /** Adds a route that requires a bearer token carrying `scope`. */
  add(method: string, pattern: string, scope: Scope, handler: AuthedHandler): void {
    const resolve = this.#resolve;
    this.#routes.push({
      method,
      segments: pattern.split('/').slice(1),
      run: (ctx) => {
        const auth = authenticate(ctx.req, resolve, scope);
        ctx.log.vault = auth.vault;
        return handler({ ...ctx, auth });
      },
    });
  }

  /** Adds a route without authentication. */
  addPublic(method: string, pattern: string, handler: PublicHandler): void {
    this.#routes.push({ method, segments: pattern.split('/').slice(1), run: handler });
  }

  /**
   * Finds the route of a request.
   * @throws HttpError 400 `bad-request` when a path parameter is not valid percent-encoding.
   */
  match(method: string, path: string): RouteMatch {
    const parts = path.split('/').slice(1);
    const allowed: string[] = [];
    for (const route of this.#routes) {
      const params = matchSegments(route.segments, parts);
      if (!params) continue;
      if (route.method === method) return { kind: 'found', run: route.run, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!;
    const actual = parts[i]!;
    if (expected.startsWith(':')) {
      if (actual === '') return undefined;
      try {
        params[expected.slice(1)] = decodeURIComponent(actual);
      } catch {
        throw badRequest(`path parameter ${expected.slice(1)} is not valid percent-encoding`);
      }
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}

/**
 * Turns zod issues into 400 `bad-request` error objects whose pointers start at `base`
 * (e.g. `/data/attributes`). Details name the field and the rule, never the value.
 */
export function validationError(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
  base: string,
): HttpError {
  const errors = issues.map((issue): ErrorObject => {
    const path = issue.path.map((key) => String(key));
    const field = path.length > 0 ? path.join('.') : 'body';
    return {
      status: '400',
      code: 'bad-request',
      detail: `${field}: ${issue.message}`,
      source: {
        pointer: `${base}${path.map((p) => `/${p.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')}`,
      },
    };
  });
  return new HttpError(400, errors);
}
