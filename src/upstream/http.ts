import { performance } from 'node:perf_hooks';
import { rootCertificates } from 'node:tls';
import type { Tracer } from '@opentelemetry/api';
import type { Agent, Dispatcher, ProxyAgent, RetryAgent } from 'undici';
import type { z } from 'zod';
import type { UpstreamProxyConfig } from '../config/index.ts';
import type { Logger } from '../lib/logger.ts';
import { type Metrics, routeTemplate } from '../lib/metrics.ts';
import { SpanKind } from '../lib/otel-api.ts';
import { injectTraceContext, recordSpanFailure } from '../lib/tracing.ts';
import { type UpstreamArea, UpstreamError } from './errors.ts';
import { errorBodySchema } from './wire.ts';

export { InvalidArgumentError, type UpstreamArea, UpstreamError } from './errors.ts';

/** HTTP methods the upstream clients use. */
export type UpstreamMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Reviver passed to `JSON.parse`; `context.source` is the raw text of a primitive (Node 24, JSON.parse
 * source text access), which lets a client read numbers too large for a double (full PANs sent as
 * JSON numbers, docs/gap-decisions.md "Card interface", Check) without losing digits.
 */
export type JsonReviver = (key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * One upstream call.
 * - `url`: absolute address, path segments already percent-encoded by the caller.
 * - `headers`: extra request headers (`authorization`, `content-type`); `accept` and `user-agent` are
 *   set here unless given.
 * - `body`: the serialised request body (never logged).
 * - `expectStatus`: statuses that count as success; any 2xx when absent. Another 2xx or a 1xx/3xx is
 *   an `invalid-response`, a 4xx/5xx an error mapped from its contract §3 body.
 * - `schema`: zod schema of the success body, producing the domain value; absent means the body is
 *   read and discarded (e.g. 204) and `data` is undefined.
 * - `jsonReviver`: see {@link JsonReviver}.
 * - `vault`: the vault (tenant) the call is made for; picks the vault's outbound forward proxy when
 *   the area goes through one ({@link UpstreamHttpOptions.proxy}). Absent for the token endpoint.
 * - `optionalBodyStatuses`: expected statuses whose body is optional (e.g. a 303 that names its
 *   target in `Location`): an empty or non-JSON body of one of them reaches `schema` as `undefined`.
 */
export interface UpstreamCall<T> {
  area: UpstreamArea;
  vault?: string;
  method: UpstreamMethod;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  expectStatus?: readonly number[];
  schema?: z.ZodType<T>;
  jsonReviver?: JsonReviver;
  optionalBodyStatuses?: readonly number[];
}

/**
 * A successful upstream answer: its HTTP status, the schema's output (undefined without one) and the
 * `Location` header when the answer has one (e.g. the existing card of a card interface 303).
 */
export interface UpstreamResponse<T> {
  status: number;
  data: T;
  location?: string;
}

/**
 * The pooled HTTP client shared by every upstream client (see {@link createUpstreamHttp}).
 * `request` resolves with the parsed success body or rejects with {@link UpstreamError} (never another
 * error type). `close(graceMs)` refuses new requests, lets in-flight ones finish for at most `graceMs`
 * (default: their own deadline), then aborts the rest (`client-closed`) and closes the pooled
 * connections.
 */
export interface UpstreamHttp {
  request<T = undefined>(call: UpstreamCall<T>): Promise<UpstreamResponse<T>>;
  close(graceMs?: number): Promise<void>;
  /** Aborts every call in flight now (each rejects with `client-closed`); for a bounded shutdown. */
  abortInFlight(): void;
}

/**
 * Options of {@link createUpstreamHttp}.
 * - `timeoutMs`: total deadline of one call in ms: connect, retries, response headers and the whole
 *   body together. An upstream that trickles its answer (one byte every few seconds) is cut off at the
 *   deadline, not per chunk; the call then fails with the retryable `upstream-timeout`. (The same
 *   value also bounds connect, headers and each body pause in undici, which checks those on a timer of
 *   about 1 s resolution.)
 * - `logger`: receives one line per call (debug; warn for retryable failures and unparseable bodies).
 * - `connectionsPerOrigin`: keep-alive pool size per origin; default 64.
 * - `retry`: automatic retry of idempotent methods (GET, PUT, DELETE) on 502/503/504 and connection
 *   resets: `maxRetries` (default 2), first delay `minDelayMs` (default 100 ms, doubled each time),
 *   capped at `maxDelayMs` (default 1000 ms, also caps a `Retry-After`). POST is never retried here.
 * - `maxResponseBytes`: larger bodies are refused as `invalid-response`; default 1 MiB.
 * - `userAgent`: default `cardgraph`.
 * - `metrics`: records `cardgraph_upstream_request_duration_seconds` per call.
 * - `tracer`: one client span per call (`upstream <METHOD> <route template>`), child of the active
 *   span, whose W3C `traceparent` is sent upstream.
 * - `proxy`: the vaults' outbound forward proxy (sandbox contract §8, `UPSTREAM_PROXY*`,
 *   `UPSTREAM_CA_FILE`): calls of its `areas` for a vault with a proxy go through that proxy (one
 *   pooled undici `ProxyAgent` per proxy address, made with the first call and closed by `close`);
 *   everything else, the token endpoint always, connects directly. Its credentials travel only as
 *   `Proxy-Authorization: Basic` and never reach logs, errors, spans or metrics, which name the
 *   proxy by `host:port`.
 */
export interface UpstreamHttpOptions {
  timeoutMs: number;
  logger: Logger;
  connectionsPerOrigin?: number;
  retry?: { maxRetries?: number; minDelayMs?: number; maxDelayMs?: number };
  maxResponseBytes?: number;
  userAgent?: string;
  metrics?: Metrics;
  tracer?: Tracer;
  proxy?: UpstreamProxyConfig;
}

const IDEMPOTENT_METHODS: readonly UpstreamMethod[] = ['GET', 'PUT', 'DELETE'];
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Abort reasons of a call: its own deadline passed, or the client was closed (shutdown). */
const DEADLINE = Symbol('upstream deadline');
const CLOSED = Symbol('upstream client closed');
const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_REQ_RETRY',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);
const CLOSED_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);
/** TLS verification failures (Node's OpenSSL codes): the peer's chain is not one we trust. */
const UNTRUSTED_CERTIFICATE_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  // undici's wrapper of a failed TLS handshake with the proxy itself.
  'UND_ERR_PRX_TLS',
]);
/**
 * undici's messages when the proxy refuses: another status than 200 to the CONNECT of a tunnelled
 * (`https://`) upstream, or 407 to a request it forwards to an `http://` upstream (no tunnel: undici
 * turns that answer into an InvalidArgumentError).
 */
const TUNNEL_REFUSED = /Proxy response \((\d{3})\)|^Proxy Authentication Required \((407)\)$/;

/** undici's module, imported by the first upstream call (see `createUpstreamHttp`). */
type Undici = typeof import('undici');

/** One outbound forward proxy: its pooled agent (and the retrying view of it) and its `host:port`. */
interface ProxyRoute {
  agent: ProxyAgent;
  retrying: RetryAgent;
  /** `host:port` of the proxy: what logs and errors name (its URL carries credentials). */
  label: string;
}

/**
 * `host:port` of a proxy address, the only part of it that may be shown (its user and password are
 * credentials).
 */
export function proxyLabel(proxyUrl: string): string {
  const url = new URL(proxyUrl);
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/**
 * Creates the upstream HTTP client: one undici `Agent` (keep-alive pool) used directly for POST, and
 * wrapped in a `RetryAgent` for GET, PUT and DELETE; likewise one `ProxyAgent` per outbound proxy
 * address (`options.proxy`, sandbox contract §8) for the calls routed through it, all closed by
 * `close`. undici is imported, and the pools made, by the first call (nothing before it needs them,
 * so the gateway starts listening sooner). A POST that creates or enrols must not be sent twice
 * behind the caller's back, so only idempotent methods are retried automatically; timeouts are never retried here (the upstream may
 * still be working on the request).
 *
 * Every failure rejects with {@link UpstreamError}; bodies are always read to the end (or destroyed by
 * undici on error) so sockets return to the pool.
 */
export function createUpstreamHttp(options: UpstreamHttpOptions): UpstreamHttp {
  const { timeoutMs, logger } = options;
  const poolOptions = {
    connections: options.connectionsPerOrigin ?? 64,
    connectTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    maxResponseSize: options.maxResponseBytes ?? 1024 * 1024,
  };
  /**
   * The pools and their retrying wrappers, made with undici on the first call rather than at start
   * (undici is a hundred modules; nothing before the first upstream call needs it).
   */
  interface Transport {
    request: Undici['request'];
    agent: Agent;
    retrying: RetryAgent;
    proxies: ReturnType<typeof createProxyRoutes>;
  }
  let transport: Transport | undefined;
  let opening: Promise<Transport> | undefined;
  function openTransport(): Promise<Transport> {
    opening ??= import('undici').then((undici) => {
      const agent = new undici.Agent(poolOptions);
      const withRetries = (dispatcher: Dispatcher) =>
        new undici.RetryAgent(dispatcher, {
          // Error responses are passed through after the last attempt so their contract §3 body is read.
          throwOnError: false,
          maxRetries: options.retry?.maxRetries ?? 2,
          minTimeout: options.retry?.minDelayMs ?? 100,
          maxTimeout: options.retry?.maxDelayMs ?? 1000,
          timeoutFactor: 2,
          retryAfter: true,
          methods: [...IDEMPOTENT_METHODS],
          statusCodes: [502, 503, 504],
          errorCodes: ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'],
        });
      transport = {
        request: undici.request,
        agent,
        retrying: withRetries(agent),
        proxies: createProxyRoutes(options.proxy, poolOptions, withRetries, undici.ProxyAgent),
      };
      return transport;
    });
    return opening;
  }
  const proxies = proxyRouting(options.proxy);
  if (options.proxy) {
    logger.info(
      { proxies: proxies.labels, areas: options.proxy.areas, privateCa: options.proxy.caPem !== undefined },
      'upstream calls of these areas go through the outbound proxy',
    );
  }
  const userAgent = options.userAgent ?? 'cardgraph';
  let closing: Promise<void> | undefined;
  let closed = false;
  /** Abort controllers of the calls in flight, so shutdown can cut them off. */
  const inFlight = new Set<AbortController>();

  function request<T>(call: UpstreamCall<T>): Promise<UpstreamResponse<T>> {
    const route = `${call.method} ${routeTemplate(new URL(call.url).pathname)}`;
    const proxied = proxies.routeOf(call);
    const started = performance.now();
    const observe = (status: string) =>
      options.metrics?.upstreamDuration.observe(
        { area: call.area, operation: route, status },
        (performance.now() - started) / 1000,
      );
    if (!options.tracer) {
      return send(call).then(
        (response) => {
          observe(String(response.status));
          return response;
        },
        (error: UpstreamError) => {
          observe(error.status === undefined ? error.code : String(error.status));
          throw error;
        },
      );
    }
    return options.tracer.startActiveSpan(
      `upstream ${route}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': call.method,
          'url.template': routeTemplate(new URL(call.url).pathname),
          'server.address': new URL(call.url).hostname,
          'cardgraph.upstream.area': call.area,
          // host:port only: the proxy address carries credentials.
          ...(proxied ? { 'cardgraph.upstream.proxy': proxied.label } : {}),
        },
      },
      async (span) => {
        try {
          const response = await send({ ...call, headers: injectTraceContext({ ...call.headers }) });
          span.setAttribute('http.response.status_code', response.status);
          observe(String(response.status));
          return response;
        } catch (error) {
          const failure = error as UpstreamError;
          if (failure.status !== undefined) span.setAttribute('http.response.status_code', failure.status);
          recordSpanFailure(span, failure.code);
          observe(failure.status === undefined ? failure.code : String(failure.status));
          throw error;
        } finally {
          span.end();
        }
      },
    );
  }

  async function send<T>(call: UpstreamCall<T>): Promise<UpstreamResponse<T>> {
    const url = new URL(call.url);
    // Paths carry ids and aliases only (v1 sends PANs in bodies), so the path is safe to log.
    const path = url.pathname;
    const operation = `${call.method} ${path}`;
    const route = proxies.routeOf(call);
    const via = route ? { proxy: route.label } : {};
    const logFields = { area: call.area, method: call.method, path, ...via };
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);

    let status: number | undefined;
    let location: string | undefined;
    // One deadline for the whole exchange (retries, headers and body): undici's own body timeout
    // restarts with every chunk, so an upstream trickling bytes would otherwise hold the call forever.
    // Aborting with a symbol reason avoids building a DOMException per call.
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(DEADLINE), timeoutMs);
    inFlight.add(controller);
    try {
      // The first call waits for undici (see openTransport); a close meanwhile refuses it as before.
      const opened = transport ?? (closed ? undefined : await openTransport());
      if (closed || !opened)
        throw new UpstreamError({ area: call.area, operation, code: 'client-closed', retryable: false });
      const idempotent = IDEMPOTENT_METHODS.includes(call.method);
      let text: string;
      try {
        const { request: undiciRequest, agent, retrying, proxies: pools } = opened;
        const proxied = route ? pools.routeFor(route.uri) : undefined;
        const dispatcher: Dispatcher = proxied
          ? idempotent
            ? proxied.retrying
            : proxied.agent
          : idempotent
            ? retrying
            : agent;
        const response = await undiciRequest(url, {
          dispatcher,
          method: call.method,
          headers: { accept: 'application/json', 'user-agent': userAgent, ...call.headers },
          body: call.body ?? null,
          signal: controller.signal,
        });
        status = response.statusCode;
        const locationHeader = response.headers.location;
        if (typeof locationHeader === 'string') location = locationHeader;
        text = await response.body.text();
      } catch (error) {
        if (controller.signal.aborted) {
          const code = controller.signal.reason === DEADLINE ? 'upstream-timeout' : 'client-closed';
          throw new UpstreamError({
            area: call.area,
            operation,
            code,
            ...via,
            ...(code === 'client-closed' ? { retryable: false } : {}),
          });
        }
        throw transportError(call.area, operation, status, error, route?.label);
      } finally {
        clearTimeout(deadline);
        inFlight.delete(controller);
      }

      const expected = call.expectStatus ? call.expectStatus.includes(status) : status >= 200 && status < 300;
      if (!expected) {
        if (status >= 400) throw errorFromBody(call.area, operation, status, text);
        throw new UpstreamError({ area: call.area, operation, status, code: 'invalid-response' });
      }
      if (!call.schema) {
        logger.debug({ ...logFields, status, durationMs: elapsed() }, 'upstream call');
        return { status, data: undefined as T };
      }
      let json = parseJson(text, call.jsonReviver);
      if (!json.ok && call.optionalBodyStatuses?.includes(status)) json = { ok: true, value: undefined };
      if (!json.ok) {
        logger.warn({ ...logFields, status, durationMs: elapsed() }, 'upstream response is not JSON');
        throw new UpstreamError({ area: call.area, operation, status, code: 'invalid-response' });
      }
      const parsed = call.schema.safeParse(json.value);
      if (!parsed.success) {
        // Issue paths and codes only: values may be card data.
        const issues = parsed.error.issues.map((issue) => ({
          path: `/${issue.path.map(String).join('/')}`,
          code: issue.code,
        }));
        logger.warn(
          { ...logFields, status, durationMs: elapsed(), issues },
          'upstream response failed validation',
        );
        throw new UpstreamError({ area: call.area, operation, status, code: 'invalid-response' });
      }
      logger.debug({ ...logFields, status, durationMs: elapsed() }, 'upstream call');
      return { status, data: parsed.data, ...(location === undefined ? {} : { location }) };
    } catch (error) {
      const failure =
        error instanceof UpstreamError
          ? error
          : new UpstreamError({ area: call.area, operation, code: 'request-failed', retryable: false });
      const level = failure.retryable ? 'warn' : 'debug';
      logger[level](
        { ...logFields, status: failure.status, code: failure.code, durationMs: elapsed() },
        'upstream call failed',
      );
      throw failure;
    }
  }

  const abortInFlight = () => {
    for (const controller of inFlight) controller.abort(CLOSED);
  };
  return {
    request,
    abortInFlight,
    close(graceMs = timeoutMs) {
      closing ??= (async () => {
        closed = true;
        // agent.close() waits for in-flight requests; abort whatever is still running after the
        // grace period so shutdown is bounded even with an upstream that never finishes.
        const abortRest = setTimeout(abortInFlight, graceMs);
        try {
          const opened = await opening;
          if (opened) await Promise.all([opened.agent.close(), opened.proxies.close()]);
        } finally {
          clearTimeout(abortRest);
        }
      })();
      return closing;
    },
  };
}

function parseJson(
  text: string,
  reviver: JsonReviver | undefined,
): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]) };
  } catch {
    return { ok: false };
  }
}

/** Where a call goes through an outbound proxy: the proxy's URL and its `host:port` label. */
interface ProxyTarget {
  uri: string;
  /** `host:port` of the proxy: what logs and errors name (its URL carries credentials). */
  label: string;
}

/**
 * The routing of {@link UpstreamHttpOptions.proxy}, without undici: `routeOf(call)` is the proxy of a
 * call (undefined: direct), `labels` the distinct proxies' `host:port`.
 */
function proxyRouting(proxy: UpstreamProxyConfig | undefined): {
  routeOf(call: UpstreamCall<unknown>): ProxyTarget | undefined;
  labels: string[];
} {
  if (!proxy) return { routeOf: () => undefined, labels: [] };
  const targets = new Map<string, ProxyTarget>();
  const targetFor = (uri: string): ProxyTarget => {
    let target = targets.get(uri);
    if (!target) {
      target = { uri, label: proxyLabel(uri) };
      targets.set(uri, target);
    }
    return target;
  };
  const everyVault = proxy.all === undefined ? undefined : targetFor(proxy.all);
  const byVault = new Map(Object.entries(proxy.vaults).map(([vault, uri]) => [vault, targetFor(uri)]));
  const areas = new Set<UpstreamArea>(proxy.areas);
  return {
    routeOf(call) {
      if (!areas.has(call.area)) return undefined;
      return (call.vault === undefined ? undefined : byVault.get(call.vault)) ?? everyVault;
    },
    labels: [...targets.values()].map((target) => target.label),
  };
}

/**
 * The pools of the outbound forward proxies of {@link UpstreamHttpOptions.proxy}: one
 * {@link ProxyRoute} per distinct proxy address (every one made here, once). `routeFor(uri)` is the
 * route of a proxy of {@link proxyRouting} (throws Error for an address not configured), and `close`
 * closes every proxy pool.
 */
function createProxyRoutes(
  proxy: UpstreamProxyConfig | undefined,
  poolOptions: Pick<
    ProxyAgent.Options,
    'connections' | 'connectTimeout' | 'headersTimeout' | 'bodyTimeout' | 'maxResponseSize'
  >,
  withRetries: (dispatcher: Dispatcher) => RetryAgent,
  ProxyAgentClass: typeof ProxyAgent,
): {
  routeFor(uri: string): ProxyRoute;
  close(): Promise<void>;
} {
  const routes = new Map<string, ProxyRoute>();
  if (proxy) {
    // The provider's CA is trusted besides the system roots (a `ca` option replaces them otherwise),
    // for the TLS to the proxy and for the upstream TLS the proxy intercepts and re-signs.
    const tls = proxy.caPem ? { ca: [...rootCertificates, proxy.caPem] } : {};
    for (const uri of [...(proxy.all === undefined ? [] : [proxy.all]), ...Object.values(proxy.vaults)]) {
      if (routes.has(uri)) continue;
      const agent = new ProxyAgentClass({ ...poolOptions, uri, proxyTls: tls, requestTls: tls });
      routes.set(uri, { agent, retrying: withRetries(agent), label: proxyLabel(uri) });
    }
  }
  return {
    routeFor(uri) {
      const route = routes.get(uri);
      // Never a direct connection in place of a configured proxy.
      if (!route) throw new Error(`no pool for the proxy ${proxyLabel(uri)}`);
      return route;
    },
    async close() {
      await Promise.all([...routes.values()].map((route) => route.agent.close()));
    },
  };
}

function transportError(
  area: UpstreamArea,
  operation: string,
  status: number | undefined,
  error: unknown,
  proxy?: string,
) {
  const code = errorCode(error);
  // undici error messages ("Headers Timeout Error", "other side closed", "Proxy response (407) !==
  // 200 when HTTP Tunneling") carry no request data nor proxy credentials, so the original error is
  // kept as the cause for diagnosis.
  const base = { area, operation, cause: error, ...(proxy === undefined ? {} : { proxy }) };
  if (proxy !== undefined) {
    const tunnel = TUNNEL_REFUSED.exec(error instanceof Error ? error.message : '');
    if (tunnel) {
      const answered = Number(tunnel[1] ?? tunnel[2]);
      return answered === 407
        ? new UpstreamError({ ...base, code: 'proxy-authentication-failed', retryable: false })
        : new UpstreamError({ ...base, code: 'proxy-refused', retryable: answered >= 500 });
    }
    if (UNTRUSTED_CERTIFICATE_CODES.has(code) || UNTRUSTED_CERTIFICATE_CODES.has(errorCode(causeOf(error)))) {
      return new UpstreamError({ ...base, code: 'proxy-certificate-untrusted', retryable: false });
    }
  }
  if (TIMEOUT_CODES.has(code)) return new UpstreamError({ ...base, code: 'upstream-timeout' });
  if (CONNECTION_CODES.has(code)) return new UpstreamError({ ...base, code: 'connection-failed' });
  if (CLOSED_CODES.has(code)) return new UpstreamError({ ...base, code: 'client-closed', retryable: false });
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
    return new UpstreamError({
      ...base,
      ...(status === undefined ? {} : { status }),
      code: 'invalid-response',
    });
  }
  return new UpstreamError({ ...base, code: 'request-failed', retryable: false });
}

/** The `code` member of an error, `''` without one. */
function errorCode(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
}

function causeOf(error: unknown): unknown {
  return error instanceof Error ? error.cause : undefined;
}

const STATUS_CODES: Readonly<Record<number, string>> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  422: 'unprocessable',
  429: 'rate-limited',
  500: 'server-error',
  502: 'bad-gateway',
  503: 'service-unavailable',
  504: 'gateway-timeout',
};

/**
 * Maps an error status and its body (contract §3 JSON:API errors, or the RFC 6749 `{"error"}` form of
 * the token endpoint) to an {@link UpstreamError}. The first error object names the code; a body that
 * cannot be read falls back to a code derived from the status.
 */
function errorFromBody(area: UpstreamArea, operation: string, status: number, text: string): UpstreamError {
  const json = parseJson(text, undefined);
  const parsed = json.ok ? errorBodySchema.safeParse(json.value) : undefined;
  const fallbackCode = STATUS_CODES[status] ?? (status >= 500 ? 'server-error' : `http-${status}`);
  if (!parsed?.success) return new UpstreamError({ area, operation, status, code: fallbackCode });
  const body = parsed.data;
  return new UpstreamError({
    area,
    operation,
    status,
    code: body.code ?? fallbackCode,
    ...(body.detail === undefined ? {} : { detail: body.detail }),
    ...(body.pointer === undefined ? {} : { pointer: body.pointer }),
  });
}
