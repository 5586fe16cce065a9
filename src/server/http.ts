import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Tracer } from '@opentelemetry/api';
import type { Config } from '../config/index.ts';
import { CARD_EVENTS_WEBHOOK_PATH } from '../events/webhook-receiver.ts';
import { acceptProxyProtocol, httpServerTimeouts, limitConnectionsPerAddress } from '../lib/client-limits.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { context, ROOT_CONTEXT, SpanKind, trace } from '../lib/otel-api.ts';
import { publicReadiness, type ReadinessReport } from '../lib/readiness.ts';
import { createRequestRecord, REQUEST_ID_HEADER, type RequestRecord } from '../lib/request-record.ts';
import type { Shutdown } from '../lib/shutdown.ts';
import { incomingTraceContext, recordSpanFailure } from '../lib/tracing.ts';
import { sendJson } from '../lib/transport-errors.ts';
import type { LiveHub } from '../live/hub.ts';
import { GRAPHIQL_ASSET_PREFIX } from '../plugins/graphiql.ts';
import { GRAPHQL_SSE_PATH } from '../plugins/graphql-sse.ts';
import { type GraphQLRuntime, MAX_REQUEST_BODY_BYTES } from '../runtime/index.ts';
import { writeAccessLine } from './access-line.ts';
import { createGraphqlHttpHandler } from './graphql-http.ts';
import { LiveSseStreams } from './live-sse.ts';

/** Routes named in access lines and spans; any other path is logged as `other` (paths may carry input). */
const ROUTES = new Set([
  '/graphql',
  GRAPHQL_SSE_PATH,
  CARD_EVENTS_WEBHOOK_PATH,
  '/health',
  '/readiness',
  '/yoga-health',
]);

/** The gateway's public HTTP server; disposing it waits until every connection has closed. */
export interface HttpServer extends AsyncDisposable {
  /** The Node server (graphql-ws upgrades on it, src/server/graphql-ws.ts). */
  readonly server: Server;
  /** Shutdown step 1: accepts no new connections; requests on open keep-alive connections finish. */
  stopAccepting(): void;
}

/**
 * The gateway's HTTP server: webhooks at `/webhooks/card-events` (`webhooks`), liveness at
 * `/health`, readiness at `/readiness` (`readiness`; 503 when not ready; the status only), everything else through
 * the GraphQL handler (`/graphql`, GraphiQL and its assets, SSE: src/server/graphql-http.ts, its lean
 * path when `graphql.leanHttp`, else the runtime's Yoga). Each request gets a request id
 * (`X-Request-Id`), a server span joining the caller's `traceparent` and one access line; the
 * timeouts and the per-address connection cap of `config.http` apply.
 */
export function createHttpServer(options: {
  /** Its limits (`http`) and whether plain GraphQL requests take the lean path (`graphql.leanHttp`). */
  config: Pick<Config, 'http' | 'graphql' | 'tracing' | 'websocket'>;
  runtime: GraphQLRuntime;
  /** The live-subscription hub the SSE roads serve live subscriptions from (src/live/hub.ts). */
  live: LiveHub;
  metrics: Metrics;
  webhooks: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  readiness: () => Promise<ReadinessReport>;
  tracer: Tracer;
  logger: Logger;
  /** Its cut-off closes every connection; the close waits at most 5 s (or until the cut-off) for them. */
  shutdown: Shutdown;
}): HttpServer {
  const { tracer, logger } = options;
  const handleGraphQL = createGraphqlHttpHandler({
    yoga: options.runtime.yoga,
    lean: options.config.graphql.leanHttp,
    metrics: options.metrics,
    logger,
    live: {
      hub: options.live,
      viewerAuth: options.runtime.viewerAuth,
      // graphql-ws's limit of unsent data, so both streaming transports cut a slow client alike.
      streams: new LiveSseStreams({ logger, maxBufferedBytes: options.config.websocket.maxBufferedBytes }),
    },
  });
  // Tracing off (no OTEL_* exporter): no span, no trace context per request (issue 21 item 3). The
  // span would be a no-op, and upstream calls inject nothing either way: a no-op span has no valid
  // context, and a trusted client trace is never forwarded (src/lib/tracing.ts).
  const tracing = options.config.tracing !== undefined;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = ROUTES.has(path)
      ? path
      : path.startsWith(GRAPHIQL_ASSET_PREFIX)
        ? GRAPHIQL_ASSET_PREFIX
        : 'other';
    const record = createRequestRecord(req.headers[REQUEST_ID_HEADER]);
    res.setHeader(REQUEST_ID_HEADER, record.id);
    const startedAt = performance.now();
    if (!tracing) {
      res.once('close', () => {
        writeAccessLine(logger, {
          record,
          method: req.method ?? 'GET',
          route,
          status: res.writableFinished ? res.statusCode : 499,
          durationMs: performance.now() - startedAt,
        });
      });
      // The root context all the same: never the connection's earlier context (see incomingTraceContext).
      context.with(ROOT_CONTEXT, () => dispatch(req, res, path, record));
      return;
    }
    // A client's traceparent counts only when the operator trusts it (OTEL_TRUST_CLIENT_TRACE).
    const incoming = incomingTraceContext(req.headers, options.config.tracing?.trustClientTrace ?? false);
    const span = tracer.startSpan(
      `${req.method ?? 'GET'} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method ?? 'GET',
          'http.route': route,
          'cardgraph.request_id': record.id,
        },
      },
      incoming,
    );
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) recordSpanFailure(span, `http-${res.statusCode}`);
      span.end();
      writeAccessLine(logger, {
        record,
        method: req.method ?? 'GET',
        route,
        status: res.writableFinished ? res.statusCode : 499,
        durationMs: performance.now() - startedAt,
      });
    });
    // On top of the incoming context: it tells upstream calls whether a client started the trace.
    context.with(trace.setSpan(incoming, span), () => dispatch(req, res, path, record));
  };
  const server = createServer(httpServerTimeouts(options.config.http), onRequest);
  // `Expect: 100-continue` (RFC 9110 §10.1.1), one rule for every road (lean, Yoga, graphql-sse): a
  // GraphQL request declaring a body over MAX_REQUEST_BODY_BYTES is answered 413 at once, without
  // inviting the body; any other is invited (`100 Continue`) and then handled as any request. The
  // webhook receiver keeps Node's default (invited), its own limit refuses the body as it arrives.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const declared = Number(req.headers['content-length']);
    const path = (req.url ?? '/').split('?')[0];
    if (path === CARD_EVENTS_WEBHOOK_PATH || !(declared > MAX_REQUEST_BODY_BYTES)) res.writeContinue();
    onRequest(req, res);
  });

  /** Answers one request by its path (`record`: its access line's record). */
  function dispatch(req: IncomingMessage, res: ServerResponse, path: string, record: RequestRecord): void {
    if (path === CARD_EVENTS_WEBHOOK_PATH) {
      options.webhooks(req, res).catch((error: unknown) => {
        logger.error({ err: error }, 'webhook receiver failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
    } else if (path === '/health') {
      sendJson(res, 200, { status: 'ok' });
    } else if (path === '/readiness') {
      options.readiness().then(
        // Anonymous callers learn the status only; the checks (vault ids, upstream origins) are
        // on the metrics listener (src/server/metrics.ts).
        (report) => sendJson(res, report.status === 'ready' ? 200 : 503, publicReadiness(report)),
        (error: unknown) => {
          logger.error({ err: error }, 'readiness probe failed');
          sendJson(res, 503, { status: 'unavailable' });
        },
      );
    } else {
      handleGraphQL(req, res, record);
    }
  }
  // Behind trusted balancers the cap counts the client each connection's PROXY header names.
  acceptProxyProtocol(server, {
    trustedProxies: options.config.http.trustedProxies,
    timeoutMs: options.config.http.headersTimeoutMs,
    logger,
  });
  limitConnectionsPerAddress(server, options.config.http.maxConnectionsPerAddress, logger);
  options.shutdown.onCutOff(() => server.closeAllConnections());
  const forceCloseAfterMs = Math.min(5_000, options.shutdown.cutOffMs);

  let closed: Promise<void> | undefined;
  const stopAccepting = () => {
    closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
  };
  return {
    server,
    stopAccepting,
    async [Symbol.asyncDispose]() {
      if (!server.listening && !closed) return;
      stopAccepting();
      // SSE responses end a moment after their streams do; close each connection as it goes idle,
      // and any still open after 5 s.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const force = setTimeout(() => server.closeAllConnections(), forceCloseAfterMs);
      await closed;
      clearInterval(sweep);
      clearTimeout(force);
    },
  };
}
