import type { APQStore } from '@graphql-yoga/plugin-apq';
import { GraphQLError } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { createTokenVerifier } from '../auth/verify-token.ts';
import type { Viewer } from '../auth/viewer.ts';
import { loadExampleOperations } from '../client/example-operations.ts';
import type { Config } from '../config/index.ts';
import { type ContextServices, createContext, type GraphQLContext } from '../context.ts';
import { type Logger, yogaLoggerOf } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { RequestRecord } from '../lib/request-record.ts';
import type { Tracing } from '../lib/tracing.ts';
import { useAccessLogDetails } from '../plugins/access-log.ts';
import { useCardDataRedaction } from '../plugins/card-data-redaction.ts';
import { useCompiledExecution } from '../plugins/compiled-execution.ts';
import { useCsrfPrevention } from '../plugins/csrf-prevention.ts';
import { useErrorMasking } from '../plugins/error-masking.ts';
import { developmentTokenIssuer, useLocalGraphiQL } from '../plugins/graphiql.ts';
import { type LiveStreams, useGraphQLSSE } from '../plugins/graphql-sse.ts';
import { useIncrementalDelivery } from '../plugins/incremental-delivery.ts';
import { useIntrospectionSwitch } from '../plugins/introspection.ts';
import { useLiveRequests } from '../plugins/live-requests.ts';
import { useOperationLimits } from '../plugins/operation-limits.ts';
import { useOperationMetrics } from '../plugins/operation-metrics.ts';
import { useOperationTracing } from '../plugins/operation-tracing.ts';
import { loadTrustedDocuments, usePersistedOperations } from '../plugins/persisted-operations.ts';
import { useRequestId } from '../plugins/request-id.ts';
import { useRequestInputChecks } from '../plugins/request-input.ts';
import { useTokenExpiry } from '../plugins/token-expiry.ts';
import { createViewerAuth, useViewerAuth, type ViewerAuth } from '../plugins/viewer-auth.ts';
import { schema, subgraphSchema } from '../schema/index.ts';
import {
  createValidationResults,
  parserAndValidationCaches,
  useParseErrorCache,
  useValidationCache,
} from './document-cache.ts';

/** What the HTTP server and graphql-ws pass to Yoga besides the request. */
export type ServerContext = {
  /** The viewer the transport resolved already (graphql-ws at `connection_init`, the SSE roads). */
  viewer?: Viewer | null;
  requestRecord?: RequestRecord;
  /**
   * Asks the live-subscription hub (src/live/hub.ts) to serve a live subscription from a shared
   * execution; `iterable` asks for an async iterable of its results (src/plugins/live-requests.ts).
   */
  live?: { endsAtTokenExpiry: boolean; iterable?: boolean };
};

/**
 * The live-subscription hub as the runtime sees it (src/live/hub.ts, a layer above: passed in, not
 * imported): its Yoga plugin, and the members graphql-sse's single-connection mode reads.
 */
export type LiveHubPlugin = LiveStreams & { plugin(): Plugin };

/** Largest GraphQL request body (bytes): Yoga's `maxRequestBodySize`, and the lean path's (src/server/graphql-http.ts). */
export const MAX_REQUEST_BODY_BYTES = 25_000_000;

/** The transport-free GraphQL runtime the servers (src/server/) answer with. */
export interface GraphQLRuntime {
  /**
   * Yoga with every plugin: HTTP handles requests with it; every transport runs operations through
   * its public `getResultForParams`.
   */
  yoga: YogaServerInstance<ServerContext, GraphQLContext>;
  /** The client token check, which graphql-ws applies at `connection_init` and the SSE roads per request. */
  viewerAuth: ViewerAuth;
}

/**
 * The GraphQL runtime: the schema under Yoga at `/graphql` with one plugin per concern (viewer auth,
 * incremental delivery (`@defer`, `@stream`), request ids, access-line details, operation metrics and spans,
 * GraphiQL, introspection switch, card-data redaction, token expiry, CSRF prevention, request input
 * checks, persisted operations, SSE, operation limits), the live-subscription hub's plugin (live
 * subscriptions of every road share its executions) and error masking. GraphiQL opens with the
 * example operations.
 */
export async function createRuntime(options: {
  config: Config;
  services: ContextServices;
  apqStore: APQStore;
  metrics: Metrics;
  tracing: Tracing;
  logger: Logger;
  /** The live-subscription hub: live subscriptions of every transport share executions through it. */
  live: LiveHubPlugin;
}): Promise<GraphQLRuntime> {
  const { config, services, metrics, tracing, logger } = options;
  const viewerAuth = createViewerAuth(createTokenVerifier(config.auth), logger);
  const trusted = loadTrustedDocuments(config.persistedOperations);
  if (config.persistedOperations.mode !== 'off' && trusted.size === 0) {
    // A fresh clone has no manifest until `npm run codegen` (src/client/generated/ is not in git):
    // say so once at start rather than answer every manifest id PERSISTED_QUERY_NOT_FOUND silently.
    logger.warn(
      { manifest: config.persistedOperations.manifestPath },
      'no trusted-documents manifest loaded: manifest ids answer PERSISTED_QUERY_NOT_FOUND (run `npm run codegen` or set PERSISTED_OPERATIONS_MANIFEST)',
    );
  }
  const persistedOperations = usePersistedOperations({
    mode: config.persistedOperations.mode,
    trusted,
    apqStore: options.apqStore,
    authenticate: (authorization) => viewerAuth.fromHeader(authorization),
  });
  const graphiql = config.graphql.graphiql
    ? useLocalGraphiQL({
        endpoint: '/graphql',
        defaultDocument: () => loadExampleOperations().document,
        authorizationFor: developmentTokenIssuer(config),
        logger,
      })
    : undefined;
  if (config.graphql.graphiql && !config.graphql.introspection) {
    logger.warn('GRAPHIQL=on with INTROSPECTION=off: GraphiQL runs operations but shows no schema');
  }
  const errorMasking = useErrorMasking();
  const validationResults = createValidationResults();
  const yoga = createYoga<ServerContext, GraphQLContext>({
    // FEDERATION=on: the same schema as a Federation v2 subgraph (src/schema/subgraph.ts).
    schema: config.federation.subgraph ? await subgraphSchema() : schema,
    graphqlEndpoint: '/graphql',
    logging: yogaLoggerOf(logger),
    // Yoga's own GraphiQL loads its bundle from a CDN; src/plugins/graphiql.ts serves it locally.
    graphiql: false,
    landingPage: false,
    // Liveness and readiness are answered before Yoga (src/server/http.ts).
    healthCheckEndpoint: '/yoga-health',
    cors: corsFor(config.http.corsOrigins),
    maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
    parserAndValidationCache: parserAndValidationCaches(),
    plugins: [
      useViewerAuth(viewerAuth, (viewer) => createContext(services, viewer)),
      // @defer and @stream; before the plugins reading results, which then see merged JSON answers whole.
      useIncrementalDelivery(
        {
          maskError: (error, message) => errorMasking.maskError!(error, message, false),
          message: 'Unexpected error.',
        },
        { validated: validationResults.has },
      ),
      // Before the execute wrappers (tracing), so they wrap the compiled run and its fallback.
      ...(config.graphql.compiledExecution ? [useCompiledExecution({ metrics })] : []),
      useRequestId(),
      useAccessLogDetails(),
      useOperationMetrics(metrics),
      ...(tracing.enabled ? [useOperationTracing(tracing.tracer, metrics.operationLabel)] : []),
      ...(graphiql ? [graphiql] : []),
      useIntrospectionSwitch({ enabled: config.graphql.introspection }),
      useCardDataRedaction(),
      useTokenExpiry(),
      useCsrfPrevention(),
      useRequestInputChecks(),
      persistedOperations,
      useGraphQLSSE({
        authenticate: (authorization) => requireViewer(viewerAuth, authorization),
        // graphql-ws's limits, so both streaming transports hold the same (src/config/transports.ts).
        limits: {
          maxOperationsPerStream: config.websocket.maxSubscriptionsPerSocket,
          reservationTimeoutMs: config.websocket.connectionInitTimeoutMs,
          maxUnopenedStreamsPerClient: config.sse.maxUnopenedStreamsPerClient,
        },
        logger,
        live: options.live,
      }),
      useOperationLimits({
        limits: config.operationLimits,
        fieldSuggestions: config.graphql.fieldSuggestions,
      }),
      // Yoga's own live subscriptions go to the hub too: marked here, before the hub reads the mark.
      useLiveRequests(viewerAuth),
      options.live.plugin(),
      // After graphql-armor's parse function (token limit), so a cached parse failure is the one answered.
      useParseErrorCache(),
      // Last: where Yoga's own validation cache (off) would run, after every rule and error rewrite.
      useValidationCache(validationResults),
    ],
    maskedErrors: errorMasking,
  });
  return { yoga, viewerAuth };
}

/**
 * SSE streams need a viewer: no token is refused with 401 like a bad one.
 * @returns the viewer of the request's token.
 * @throws GraphQLError `unauthenticated` (no token) or the token's own refusal (`invalid-token`,
 *   `token-expired`), each with `http.status` 401.
 */
async function requireViewer(auth: ViewerAuth, authorization: string | null): Promise<Viewer> {
  const viewer = await auth.fromHeader(authorization);
  if (!viewer) {
    throw new GraphQLError('Authentication required: send Authorization: Bearer <token>', {
      extensions: { code: 'unauthenticated', http: { status: 401 } },
    });
  }
  return viewer;
}

/**
 * CORS of the GraphQL endpoint (issue 10, class 9): only a request whose `Origin` is one of
 * `CORS_ORIGINS` gets CORS headers (that origin, credentials allowed, GET and POST, preflight cached
 * 10 min); any other origin gets none, so browsers keep other sites from reading answers. Yoga's
 * default would reflect every origin with credentials.
 */
function corsFor(origins: readonly string[]) {
  const allowed = new Set(origins);
  return (request: Request) => {
    const origin = request.headers.get('origin');
    if (!origin || !allowed.has(origin)) return false as const;
    return { origin, credentials: true, methods: ['GET', 'POST'], maxAge: 600 };
  };
}
