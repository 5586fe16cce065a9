import { z } from 'zod';
import { commaList, httpUrl, integer, isAddressOrCidr, type SettingsSection } from './fields.ts';

/** The HTTP server, graphql-ws and graphql-sse limits against clients that trickle or hoard. */
export const transportsSettings = {
  title: 'Transports',
  about:
    'GraphQL over HTTP, SSE, graphql-sse, graphql-ws and the webhook receiver share one HTTP server. A late request is answered 408; one connection too many is answered 429.',
  shape: {
    HTTP_HEADERS_TIMEOUT_MS: integer(100, 120_000, 10_000).describe(
      "Time a client has to send a request's headers (ms); at most HTTP_REQUEST_TIMEOUT_MS.",
    ),
    HTTP_REQUEST_TIMEOUT_MS: integer(100, 600_000, 30_000).describe(
      'Time a client has to send a whole request, headers and body (ms).',
    ),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: integer(100, 600_000, 5_000).describe(
      'Time an idle keep-alive connection stays open between requests (ms).',
    ),
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: integer(0, 1_000_000, 256).describe(
      'Open connections one client address may hold (HTTP, SSE and WebSocket alike); 0: no limit. Behind a load balancer set TRUSTED_PROXIES rather than 0.',
    ),
    TRUSTED_PROXIES: commaList
      .pipe(z.array(z.string().refine(isAddressOrCidr, 'each entry is an IP address or CIDR range')))
      .optional()
      .describe(
        'Load balancers (IP addresses and CIDR ranges, comma-separated) whose connections open with a PROXY protocol header (v1 or v2; HAProxy send-proxy-v2): the per-address cap counts the client the header names. A connection from one of them without the header is closed. X-Forwarded-For never counts.',
      ),
    CORS_ORIGINS: commaList
      .pipe(
        z.array(
          httpUrl.refine(
            (origin) => new URL(origin).origin === origin,
            'each origin is scheme://host[:port], no path',
          ),
        ),
      )
      .optional()
      .describe(
        'Browser origins allowed to call the API cross-origin with credentials (CORS), comma-separated, e.g. https://app.example.com. Unset: no cross-origin access (GraphiQL is same-origin).',
      ),
    WS_MAX_PAYLOAD_BYTES: integer(1024, 1_048_576, 16_384).describe(
      'Largest graphql-ws message accepted (bytes).',
    ),
    WS_CONNECTION_INIT_TIMEOUT_MS: integer(100, 60_000, 5_000).describe(
      'Time a graphql-ws client has to send connection_init (ms); also the time to open (GET) a reserved graphql-sse stream.',
    ),
    WS_MAX_SUBSCRIPTIONS_PER_SOCKET: integer(1, 1_000, 20).describe(
      'Concurrent subscriptions one graphql-ws socket, or one graphql-sse stream, may hold.',
    ),
    WS_MAX_BUFFERED_BYTES: integer(16_384, 1_073_741_824, 1_048_576).describe(
      'Unsent bytes a graphql-ws socket may queue (a client not reading) before it is closed with 1013.',
    ),
    SSE_MAX_UNOPENED_STREAMS_PER_CLIENT: integer(1, 1_000, 10).describe(
      'Reserved (PUT) but unopened (GET) graphql-sse streams one client (token subject and vaults) may hold; one more is answered 429 too-many-unopened-streams.',
    ),
  },
} satisfies SettingsSection;

type TransportsEnv = z.output<z.ZodObject<typeof transportsSettings.shape>>;

/** graphql-ws limits. */
export interface WebSocketConfig {
  /** Largest graphql-ws message accepted (bytes). */
  maxPayloadBytes: number;
  /** Time a client has to send `connection_init` (ms). */
  connectionInitTimeoutMs: number;
  /** Concurrent subscriptions one socket may hold. */
  maxSubscriptionsPerSocket: number;
  /** Unsent bytes a socket may queue before it is closed as a slow consumer (1013). */
  maxBufferedBytes: number;
}

/**
 * graphql-sse single-connection mode at `/graphql/stream` (src/plugins/graphql-sse.ts). Its other
 * limits are graphql-ws's: `websocket.maxSubscriptionsPerSocket` operations per stream and
 * `websocket.connectionInitTimeoutMs` to open (GET) a reserved stream.
 */
export interface SseConfig {
  /**
   * Reserved (PUT) but not yet opened (GET) streams one client, a token subject with its vaults,
   * may hold at once (`SSE_MAX_UNOPENED_STREAMS_PER_CLIENT`); one more PUT is answered 429
   * `too-many-unopened-streams`. Opened streams do not count.
   */
  maxUnopenedStreamsPerClient: number;
}

/**
 * Limits of the gateway's HTTP server (GraphQL, SSE, graphql-ws upgrades and the webhook receiver
 * share it), against clients that trickle or hoard connections.
 */
export interface HttpConfig {
  /** Time a client has to send a request's headers (ms); later: 408 and the connection closes. */
  headersTimeoutMs: number;
  /** Time a client has to send a whole request, headers and body (ms); later: 408. */
  requestTimeoutMs: number;
  /** Time an idle keep-alive connection stays open between requests (ms). */
  keepAliveTimeoutMs: number;
  /**
   * Open connections one client address may hold (HTTP, SSE and WebSocket alike); one more is
   * answered 429 and closed. 0: no limit (e.g. behind a load balancer whose address all share).
   */
  maxConnectionsPerAddress: number;
  /**
   * Balancers whose connections open with a PROXY protocol header (v1 or v2) naming the client
   * (`TRUSTED_PROXIES`: IPv4/IPv6 addresses and CIDR ranges, e.g. `10.0.0.5,fd00::/64`): on their
   * connections the per-address cap counts the client the header names; a connection from one of
   * them without a valid header is closed. Empty: every peer is a client.
   */
  trustedProxies: string[];
  /**
   * Browser origins (`scheme://host[:port]`) allowed to call the API cross-origin, with
   * credentials (CORS). Empty: no cross-origin browser access.
   */
  corsOrigins: string[];
}

/** The headers deadline cannot exceed the whole request's. */
export function refineTransports(env: TransportsEnv, ctx: z.RefinementCtx): void {
  if (env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS) {
    ctx.addIssue({
      code: 'custom',
      path: ['HTTP_HEADERS_TIMEOUT_MS'],
      message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS',
    });
  }
}

/** The transports' settings from the parsed variables. */
export function transportsConfig(e: TransportsEnv): {
  websocket: WebSocketConfig;
  sse: SseConfig;
  http: HttpConfig;
} {
  return {
    websocket: {
      maxPayloadBytes: e.WS_MAX_PAYLOAD_BYTES,
      connectionInitTimeoutMs: e.WS_CONNECTION_INIT_TIMEOUT_MS,
      maxSubscriptionsPerSocket: e.WS_MAX_SUBSCRIPTIONS_PER_SOCKET,
      maxBufferedBytes: e.WS_MAX_BUFFERED_BYTES,
    },
    sse: { maxUnopenedStreamsPerClient: e.SSE_MAX_UNOPENED_STREAMS_PER_CLIENT },
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnectionsPerAddress: e.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
      trustedProxies: e.TRUSTED_PROXIES ?? [],
      corsOrigins: e.CORS_ORIGINS ?? [],
    },
  };
}
