import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { VAULT_ID_PATTERN } from './contracts/common.ts';
import { SANDBOX_WIRES, type SandboxWire } from './contracts/wire-reading.ts';

/**
 * The one reader of `process.env`. Every setting of the gateway and of the embedded sandbox is parsed
 * here with zod; a bad value fails at start with a message naming the variable.
 * `.env.example` lists every variable with its default.
 */

/** Upstream client credentials of one vault (OAuth 2.0 client credentials, contract §2). */
export interface VaultCredentials {
  clientId: string;
  clientSecret: string;
}

/** Base addresses of the upstream areas (contract §1) and its OAuth 2.0 token endpoint. */
export interface UpstreamAddresses {
  /** `{base_url}` of the card interface. */
  cardInterfaceUrl: string;
  /** `{account_updater_url}`: account updater v1 and network tokens. */
  accountUpdaterUrl: string;
  /** `{card_enrichment_url}`. */
  cardAttributesUrl: string;
  /** `{accounts_url}`. */
  accountsUrl: string;
  /** OAuth 2.0 token endpoint. */
  tokenUrl: string;
}

/**
 * The upstream areas whose calls may go through the vault's outbound forward proxy
 * (`UPSTREAM_PROXY_AREAS`), named as src/upstream/errors.ts `UpstreamArea` names them. The token
 * endpoint (`oauth`) is not one of them: it is always called directly.
 */
export const PROXIABLE_AREAS = [
  'card-interface',
  'account-updater',
  'network-tokens',
  'card-attributes',
  'accounts',
] as const;

/** One of {@link PROXIABLE_AREAS}. */
export type ProxiableArea = (typeof PROXIABLE_AREAS)[number];

/**
 * The vaults' outbound forward proxy (sandbox contract §8: account updater and network token calls go
 * through `https://<user>:<password>@<vault>.<environment>.verygoodproxy.com:8443`, whose TLS and the
 * intercepted upstream TLS are signed by the provider's CA).
 * - `all`: the proxy address of every vault without its own (`UPSTREAM_PROXY=<url>`);
 * - `vaults`: proxy address per vault id (`UPSTREAM_PROXY=<vault>=<url>,…`); a vault in neither
 *   connects directly;
 * - `areas`: the areas whose calls go through it (`UPSTREAM_PROXY_AREAS`, default account updater
 *   and network tokens);
 * - `caPem`: the PEM bundle of `UPSTREAM_CA_FILE`, trusted besides the system roots for the TLS to
 *   the proxy and for the upstream TLS it intercepts.
 * The addresses carry the proxy credentials: they are sent only as `Proxy-Authorization` and never
 * logged (src/upstream/http.ts names a proxy by `host:port`).
 */
export interface UpstreamProxyConfig {
  all?: string;
  vaults: Record<string, string>;
  areas: readonly ProxiableArea[];
  caPem?: string;
}

/** How the gateway calls the upstream, whichever it is. */
interface UpstreamClientSettings {
  /** Client credentials per vault id (tenant). */
  credentials: Record<string, VaultCredentials>;
  /**
   * Total deadline of one upstream call in ms: connect, retries, response headers and the whole
   * body (`UPSTREAM_TIMEOUT_MS`).
   */
  timeoutMs: number;
  /**
   * How the token request authenticates the client (`UPSTREAM_TOKEN_AUTH`): `form` sends
   * `client_id` and `client_secret` as form fields, as the provider documents (sandbox contract §8);
   * `basic` sends them as HTTP Basic (RFC 6749 §2.3.1).
   */
  tokenAuth: 'form' | 'basic';
  /** Space-separated scopes the token request asks for (`UPSTREAM_TOKEN_SCOPE`); none by default (§8). */
  tokenScope?: string;
  /** The outbound forward proxy; undefined when every call connects directly (`UPSTREAM_PROXY` unset). */
  proxy?: UpstreamProxyConfig;
}

/**
 * The upstream of a gateway that can start (src/upstream/index.ts): `remote` from `UPSTREAM_*`
 * addresses, or `embedded` once the development sandbox listens ({@link onSandbox}).
 */
export interface UpstreamConfig extends UpstreamAddresses, UpstreamClientSettings {
  mode: 'remote' | 'embedded';
}

/**
 * `UPSTREAM=embedded` before the development sandbox has started: its settings, no addresses yet.
 * Only src/dev.ts starts it; src/main.ts refuses this mode ({@link gatewayConfig}).
 */
export interface EmbeddedUpstreamConfig extends UpstreamClientSettings {
  mode: 'embedded';
  sandbox: {
    /** Port of the development sandbox; 0 picks a free port. */
    port: number;
    /** Delay before the sandbox completes an async enrolment and sends its notification (ms). */
    webhookDelayMs: number;
    /** The wire reading the sandbox answers in: `SANDBOX_WIRE` (`documented` by default). */
    wire: SandboxWire;
    /** Vaults with the card interface's Duplicate Card Check on: `SANDBOX_DUPLICATE_CARD_CHECK` (none by default). */
    duplicateCardCheckVaults?: string[];
  };
}

/** A configuration whose upstream has its addresses: what buildApp (src/app.ts) starts. */
export type GatewayConfig = Config & { upstream: UpstreamConfig };

/** Gateway configuration, as produced by {@link loadConfig}. Durations in ms unless the name says s. */
export interface Config {
  /**
   * `production` when `NODE_ENV=production`: `UPSTREAM` must be explicit, the development secret and
   * the sandbox credentials are refused, and GraphiQL, introspection and field suggestions are off
   * unless turned on. `development` otherwise.
   */
  environment: 'production' | 'development';
  /** HTTP port of the gateway (GraphQL, GraphiQL, graphql-ws, webhooks). 0 picks a free port. */
  port: number;
  host: string;
  logLevel: string;
  /**
   * Where the upstream is: `remote` with its addresses, or `embedded`, the development sandbox, whose
   * addresses exist only once src/dev.ts has started it ({@link onSandbox}).
   */
  upstream: UpstreamConfig | EmbeddedUpstreamConfig;
  /**
   * Longest a graceful shutdown (SIGTERM, SIGINT) may take, in ms (`SHUTDOWN_TIMEOUT_MS`): requests
   * still running shortly before it are cut off, in-flight upstream calls aborted, and the process
   * exits at the latest when it passes.
   */
  shutdownTimeoutMs: number;
  /** What one GraphQL operation may ask of the gateway and, through it, of the upstream. */
  operationLimits: {
    /** Most ids `nodes(ids:)` accepts (`NODES_MAX_IDS`). */
    nodesMaxIds: number;
    /**
     * Most representations one `_entities` call of a Federation router accepts
     * (`ENTITIES_MAX_REPRESENTATIONS`, `FEDERATION=on`): a router sends a whole page's references in
     * one call and never splits it, so this fits router pages (default 1,000). The cost counts the
     * distinct representations, the reads the call makes (docs/entity-batches.md).
     */
    entitiesMaxRepresentations: number;
    /**
     * Most entity reads one `_entities` call runs at once (`ENTITIES_READ_CONCURRENCY`); the rest
     * wait for a free slot instead of being refused (default 16).
     */
    entitiesReadConcurrency: number;
    /**
     * Highest cost of an operation, computed with its variables (`OPERATION_MAX_COST`): every field
     * returning an object counts 1, multiplied by the page sizes (`first`) and id counts (`ids`) of
     * the lists around it (src/plugins/operation-cost.ts).
     */
    maxCost: number;
    /**
     * Upstream calls one operation (or one subscription event) may make (`UPSTREAM_CALL_BUDGET`):
     * estimated before execution and counted at the upstream client boundary while it runs.
     */
    upstreamCallBudget: number;
  };
  webhooks: {
    /** Accepted signing secrets, newest first; in embedded mode the sandbox signs with the first. */
    secrets: string[];
    /** Maximum age (either direction) of the signature timestamp `t`, in seconds. */
    toleranceS: number;
  };
  events: {
    /** `sqlite`: one gateway, log in `dataDir`; `redis`: Redis Streams shared by replicas. */
    backend: 'sqlite' | 'redis';
    dataDir: string;
    redisUrl?: string;
    /**
     * Redis Sentinel (`REDIS_SENTINELS` host:port list, `REDIS_SENTINEL_MASTER`): the event log asks
     * the sentinels for the primary and follows it across failovers; `REDIS_URL` then gives only
     * credentials, database and TLS (issue 20, item 11).
     */
    redisSentinel?: { nodes: { host: string; port: number }[]; masterName: string };
    /**
     * Replicas that must hold an appended event before its webhook is acknowledged
     * (`REDIS_MIN_REPLICAS_ACK`, Redis `WAIT`); 0: the primary's answer suffices.
     */
    redisMinReplicasAck: number;
    /** Longest wait for those replicas (ms, `REDIS_REPLICAS_ACK_TIMEOUT_MS`); later the append fails. */
    redisReplicasAckTimeoutMs: number;
    /**
     * Redis of the caches shared by replicas (APQ, cache invalidations; issue 20 item 1):
     * `REDIS_CACHE_URL`, else `redisUrl`. A Redis of their own keeps a full cache from ever
     * stopping the event log's appends.
     */
    cacheRedisUrl?: string;
    /** Retention: events older than this (ms) are dropped. */
    retentionMaxAgeMs: number;
    /** Retention: at most this many events are kept. */
    retentionMaxCount: number;
  };
  /** App-wide card read cache (src/loaders/card-read-cache.ts). */
  cardCache: {
    /** Longest a read is served without a card event (ms); 0 turns the cache off. */
    ttlMs: number;
    /** Cards held. */
    maxEntries: number;
  };
  websocket: {
    /** Largest graphql-ws message accepted (bytes). */
    maxPayloadBytes: number;
    /** Time a client has to send `connection_init` (ms). */
    connectionInitTimeoutMs: number;
    /** Concurrent subscriptions one socket may hold. */
    maxSubscriptionsPerSocket: number;
    /** Unsent bytes a socket may queue before it is closed as a slow consumer (1013). */
    maxBufferedBytes: number;
  };
  /**
   * graphql-sse single-connection mode at `/graphql/stream` (src/plugins/graphql-sse.ts). Its other
   * limits are graphql-ws's: `websocket.maxSubscriptionsPerSocket` operations per stream and
   * `websocket.connectionInitTimeoutMs` to open (GET) a reserved stream.
   */
  sse: {
    /**
     * Reserved (PUT) but not yet opened (GET) streams one client, a token subject with its vaults,
     * may hold at once (`SSE_MAX_UNOPENED_STREAMS_PER_CLIENT`); one more PUT is answered 429
     * `too-many-unopened-streams`. Opened streams do not count.
     */
    maxUnopenedStreamsPerClient: number;
  };
  /**
   * Limits of the gateway's HTTP server (GraphQL, SSE, graphql-ws upgrades and the webhook receiver
   * share it), against clients that trickle or hoard connections.
   */
  http: {
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
     * them without a valid header is closed (issue 20, item 12). Empty: every peer is a client.
     */
    trustedProxies: string[];
    /**
     * Browser origins (`scheme://host[:port]`) allowed to call the API cross-origin, with
     * credentials (CORS). Empty: no cross-origin browser access.
     */
    corsOrigins: string[];
  };
  /**
   * What the GraphQL endpoint reveals about itself (`GRAPHIQL`, `INTROSPECTION`, `FIELD_SUGGESTIONS`)
   * and how it runs operations (`GRAPHQL_JIT`, `GRAPHQL_LEAN_HTTP`).
   */
  graphql: {
    /** GraphiQL on `GET /graphql` (Accept: text/html), served from the gateway's own assets. */
    graphiql: boolean;
    /** Introspection queries (`__schema`, `__type`) over every transport. */
    introspection: boolean;
    /** "Did you mean …?" suggestions in validation errors. */
    fieldSuggestions: boolean;
    /**
     * Queries and mutations run compiled by graphql-jit (`GRAPHQL_JIT`, default on;
     * src/plugins/compiled-execution.ts); off runs everything on graphql-js, e.g. to rule the
     * compiler out when a result looks wrong.
     */
    compiledExecution: boolean;
    /**
     * Plain JSON GraphQL requests skip Yoga's Fetch API adapter (`GRAPHQL_LEAN_HTTP`, default on;
     * src/server/graphql-http.ts); off lets Yoga's own handler answer every request.
     */
    leanHttp: boolean;
  };
  federation: {
    /**
     * The schema is served as a Federation v2 subgraph (`FEDERATION`, default off; issue 22):
     * `_service { sdl }` with `@link` and `@key`, `_entities` for `Card`, `AccountUpdaterCard`,
     * `NetworkToken` and `CardEvent` (src/schema/subgraph.ts). Off: the standalone schema of schema.graphql.
     */
    subgraph: boolean;
  };
  persistedOperations: {
    /**
     * Trusted documents (the codegen manifest of src/client/operations.graphql):
     * - `off`: not consulted; any operation runs, Automatic Persisted Queries (APQ) register any valid
     *   document sent with a client token;
     * - `allow`: a manifest id runs its document; anything else as with `off`;
     * - `require`: only manifest documents run (by id); APQ registration is refused.
     */
    mode: 'off' | 'allow' | 'require';
    /** The manifest (`{ "sha256:<hex>": "<document>" }`); codegen's by default. */
    manifestPath: string;
    /** APQ entries live this long (s), in Redis and in memory alike. */
    apqTtlS: number;
    /** APQ entries kept, in Redis and in memory alike (oldest dropped beyond it; issue 20 item 1). */
    apqMaxEntries: number;
    /** Bytes of APQ document text kept, in Redis and in memory alike (oldest dropped beyond it). */
    apqMaxBytes: number;
  };
  metrics: {
    /**
     * Port of the Prometheus listener (`GET /metrics`), kept apart from the public port so the load
     * balancer never exposes it; 0 picks a free port. `METRICS_PORT`, default 9464.
     */
    port: number;
    /**
     * Interface of the metrics listener; `METRICS_HOST`, default `127.0.0.1` (loopback: scrapes come
     * from the same host or a sidecar unless the operator says otherwise; issue 20 item 5).
     */
    host: string;
    /** Vault ids as label values (`METRICS_VAULT_LABELS=on`); off by default: `all`. */
    vaultLabels: boolean;
  };
  /** OpenTelemetry traces (standard `OTEL_*` variables); undefined when tracing is off. */
  tracing?: TracingConfig;
  auth: {
    /** HS256 secret for client JWTs; exactly one of jwtSecret and jwksUrl is set. */
    jwtSecret?: string;
    /** JWKS address for client JWTs (RS256/ES256/EdDSA). */
    jwksUrl?: string;
    issuer?: string;
    audience?: string;
  };
}

/**
 * Trace export settings read from the standard OpenTelemetry variables (OpenTelemetry specification,
 * "SDK environment variables" and "OTLP exporter configuration"). Tracing is on when
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set, unless
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 */
export interface TracingConfig {
  /** Full OTLP/HTTP traces address, e.g. `http://collector:4318/v1/traces`. */
  endpoint: string;
  /** `http/protobuf` (the specification's default) or `http/json`. */
  protocol: 'http/protobuf' | 'http/json';
  /** Extra request headers of the exporter (`OTEL_EXPORTER_OTLP[_TRACES]_HEADERS`, `k=v,…`). */
  headers: Record<string, string>;
  /** Export request timeout (ms). */
  timeoutMs: number;
  /** `service.name` resource attribute (`OTEL_SERVICE_NAME`, default `cardgraph`). */
  serviceName: string;
  /** Further resource attributes (`OTEL_RESOURCE_ATTRIBUTES`, `k=v,…`). */
  resourceAttributes: Record<string, string>;
  /** `OTEL_TRACES_SAMPLER`; default `parentbased_always_on`. */
  sampler:
    | 'always_on'
    | 'always_off'
    | 'traceidratio'
    | 'parentbased_always_on'
    | 'parentbased_always_off'
    | 'parentbased_traceidratio';
  /** Ratio of the `traceidratio` samplers (`OTEL_TRACES_SAMPLER_ARG`, 0…1, default 1). */
  samplerRatio: number;
  /** Delay between two batch exports (`OTEL_BSP_SCHEDULE_DELAY`, ms, default 5000). */
  scheduleDelayMs: number;
  /**
   * `OTEL_TRUST_CLIENT_TRACE=on`: a client's `traceparent` may continue a trace (its trace id and
   * sampled flag); off (default): the gateway starts its own trace and its sampler decides
   * (src/lib/tracing.ts `incomingTraceContext`, issue 20 item 7).
   */
  trustClientTrace: boolean;
}

/** Thrown by {@link loadConfig}; `message` lists every bad variable by name, never its value. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Well-known JWT secret used only when `UPSTREAM=embedded` and `AUTH_JWT_SECRET` is unset, so
 * `npm start` and `npm run token` agree on a fresh machine. Remote mode never falls back to it, and
 * `NODE_ENV=production` refuses it (whoever knows it can sign tokens for any vault).
 */
export const EMBEDDED_DEV_JWT_SECRET = 'cardgraph-embedded-development-secret-not-for-production';

/** Sandbox vault credentials of contract §2, used as the default in embedded mode. */
export const SANDBOX_CREDENTIALS: Record<string, VaultCredentials> = {
  tntsandbox1: { clientId: 'sandbox-client-1', clientSecret: 'sandbox-secret-1' },
  tntsandbox2: { clientId: 'sandbox-client-2', clientSecret: 'sandbox-secret-2' },
};

const port = z.coerce.number().int().min(0).max(65535);

const url = z.url({ protocol: /^https?$/ });
/** An integer variable within [min, max], `fallback` when unset. */
const integer = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);
/** A comma-separated list: items trimmed, empty ones dropped. */
const commaList = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));
/** An IPv4/IPv6 address, or a CIDR range (`address/prefix`, prefix within the family's bits). */
function isAddressOrCidr(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
/** `host:port` or `[ipv6]:port` (validated) as its parts. */
function hostAndPort(entry: string): { host: string; port: number } {
  const colon = entry.lastIndexOf(':');
  return { host: entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(colon + 1)) };
}
/**
 * `NODE_ENV`, trimmed and lower-cased (`Production`, ` production` are production): `production`,
 * `development` or `test` (both development), unset or blank for development. Anything else (`prod`,
 * `staging`) is refused, so a misspelt production never runs with development defaults (GraphiQL,
 * introspection, suggestions on; issue 20 item 10).
 */
const nodeEnvironment = z
  .string()
  .optional()
  .transform((v) => v?.trim().toLowerCase() || undefined)
  .pipe(
    z
      .enum(['production', 'development', 'test'], {
        error: (issue) =>
          `unknown environment ${JSON.stringify(String(issue.input).slice(0, 40))}: expected production, development or test`,
      })
      .optional(),
  );

/**
 * Host names that never leave the machine: `localhost`, 127.0.0.0/8 and `[::1]`. Only they may be
 * reached over plain `http://` when `NODE_ENV=production` (tests and sidecars on the same host).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * Variables holding addresses that carry secrets or trust: JWKS signing keys, upstream areas (PANs,
 * bearer tokens), the token endpoint (client secrets). `NODE_ENV=production` refuses `http://` for
 * them unless the host is loopback (issue 20 item 10).
 */
const HTTPS_IN_PRODUCTION = [
  'AUTH_JWKS_URL',
  'CARD_INTERFACE_URL',
  'ACCOUNT_UPDATER_URL',
  'CARD_ATTRIBUTES_URL',
  'ACCOUNTS_URL',
  'TOKEN_URL',
] as const;

/**
 * Fewest distinct characters an `AUTH_JWT_SECRET` needs when `NODE_ENV=production` (32 identical
 * characters are 32 characters long and worthless); a random 32-character hex secret has fewer than 10
 * with probability below 1e-4.
 */
export const JWT_SECRET_MIN_DISTINCT_CHARACTERS = 10;

/** A switch variable: `on` or `off`; unset or empty takes the environment's default. */
const onOff = optionalString.pipe(z.enum(['on', 'off']).optional());

/**
 * W3C Baggage-style `key=value` pairs separated by commas (values percent-decoded), the format of
 * `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES`.
 */
const keyValueList = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const out: Record<string, string> = {};
    for (const entry of (raw ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const at = entry.indexOf('=');
      if (at <= 0) {
        ctx.addIssue({ code: 'custom', message: 'expected key=value[,…]' });
        return z.NEVER;
      }
      try {
        out[decodeURIComponent(entry.slice(0, at).trim())] = decodeURIComponent(entry.slice(at + 1).trim());
      } catch {
        ctx.addIssue({ code: 'custom', message: 'bad percent-encoding' });
        return z.NEVER;
      }
    }
    return out;
  });

/**
 * `UPSTREAM_CREDENTIALS`: `vault=client_id:client_secret` pairs separated by commas, e.g.
 * `tntsandbox1=sandbox-client-1:sandbox-secret-1,tntsandbox2=sandbox-client-2:sandbox-secret-2`.
 */
const credentialsList = z.string().transform((raw, ctx) => {
  const out: Record<string, VaultCredentials> = {};
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^([A-Za-z0-9]{1,64})=([^:]+):(.+)$/.exec(entry);
    if (!match) {
      ctx.addIssue({ code: 'custom', message: 'expected vault=client_id:client_secret[,…]' });
      return z.NEVER;
    }
    out[match[1]!] = { clientId: match[2]!, clientSecret: match[3]! };
  }
  return out;
});

/**
 * `UPSTREAM_PROXY`: one proxy address for every vault (`https://user:password@host:8443`), or
 * `vault=address` pairs separated by commas (a comma inside the credentials is percent-encoded, as
 * in any URL). Each address is `http(s)://[user[:password]@]host[:port]` with no path or query.
 * Messages never repeat a value: the addresses carry credentials.
 */
const proxyList = z.string().transform((raw, ctx): { all?: string; vaults: Record<string, string> } => {
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const vaults: Record<string, string> = {};
  let all: string | undefined;
  for (const entry of entries) {
    const pair = /^([A-Za-z0-9]{1,64})=(.+)$/.exec(entry);
    const address = pair ? pair[2]! : entry;
    if (!isProxyAddress(address)) {
      ctx.addIssue({
        code: 'custom',
        message: 'expected http(s)://[user:password@]host[:port] or vault=http(s)://…[,…] (no path or query)',
      });
      return z.NEVER;
    }
    if (pair) vaults[pair[1]!] = address;
    else all = address;
  }
  if (all !== undefined && entries.length > 1) {
    ctx.addIssue({ code: 'custom', message: 'give one address for every vault, or vault=address pairs' });
    return z.NEVER;
  }
  return { ...(all === undefined ? {} : { all }), vaults };
});

function isProxyAddress(address: string): boolean {
  if (!URL.canParse(address)) return false;
  const parsed = new URL(address);
  return (
    (parsed.protocol === 'https:' || parsed.protocol === 'http:') &&
    parsed.hostname !== '' &&
    (parsed.pathname === '' || parsed.pathname === '/') &&
    parsed.search === '' &&
    parsed.hash === ''
  );
}

/** `UPSTREAM_CA_FILE`: a readable file of one or more PEM certificates; its text. */
const caFile = z.string().transform((path, ctx) => {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `cannot be read (${(error as NodeJS.ErrnoException).code})` });
    return z.NEVER;
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  try {
    if (blocks.length === 0) throw new Error('no certificate');
    for (const block of blocks) new X509Certificate(block);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'is not a PEM bundle of X.509 certificates' });
    return z.NEVER;
  }
  return pem;
});

/** The standard OpenTelemetry variables cardgraph reads (gateway and standalone sandbox alike). */
const otelEnvShape = {
  OTEL_SDK_DISABLED: z.enum(['true', 'false', '']).optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none', '']).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.pipe(url.optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString.pipe(url.optional()),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json', '']).optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(['http/protobuf', 'http/json', '']).optional(),
  OTEL_EXPORTER_OTLP_HEADERS: keyValueList,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValueList,
  OTEL_EXPORTER_OTLP_TIMEOUT: integer(1, 600_000, 10_000),
  OTEL_SERVICE_NAME: optionalString,
  OTEL_RESOURCE_ATTRIBUTES: keyValueList,
  OTEL_TRACES_SAMPLER: z
    .enum([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
    .default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
  OTEL_BSP_SCHEDULE_DELAY: integer(1, 600_000, 5_000),
  OTEL_TRUST_CLIENT_TRACE: onOff,
};

const envObject = z.object({
  // Trimmed and compared without case; anything unknown is refused (issue 20 item 10).
  NODE_ENV: nodeEnvironment,
  PORT: port.default(4000),
  HOST: z.string().min(1).default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // No default here: production must choose (see superRefine); development defaults to embedded.
  UPSTREAM: optionalString.pipe(z.enum(['embedded', 'remote']).optional()),
  SANDBOX_PORT: port.default(4010),
  SANDBOX_WEBHOOK_DELAY_MS: integer(0, 600_000, 1000),
  SANDBOX_WIRE: z.enum(SANDBOX_WIRES).default('documented'),
  SANDBOX_DUPLICATE_CARD_CHECK: commaList
    .pipe(z.array(z.string().regex(VAULT_ID_PATTERN, 'each must be an 11-character vault id')))
    .optional(),
  CARD_INTERFACE_URL: url.optional(),
  ACCOUNT_UPDATER_URL: url.optional(),
  CARD_ATTRIBUTES_URL: url.optional(),
  ACCOUNTS_URL: url.optional(),
  TOKEN_URL: url.optional(),
  UPSTREAM_CREDENTIALS: credentialsList.optional(),
  UPSTREAM_TIMEOUT_MS: integer(100, 300_000, 10_000),
  UPSTREAM_TOKEN_AUTH: optionalString.pipe(z.enum(['form', 'basic']).default('form')),
  UPSTREAM_TOKEN_SCOPE: optionalString,
  UPSTREAM_PROXY: optionalString.pipe(proxyList.optional()),
  UPSTREAM_PROXY_AREAS: optionalString.pipe(
    commaList
      .pipe(
        z
          .array(
            z.enum(PROXIABLE_AREAS, {
              error: `each area is one of ${PROXIABLE_AREAS.join(', ')} (the token endpoint is always called directly)`,
            }),
          )
          .min(1),
      )
      .default(['account-updater', 'network-tokens']),
  ),
  UPSTREAM_CA_FILE: optionalString.pipe(caFile.optional()),
  SHUTDOWN_TIMEOUT_MS: integer(500, 600_000, 15_000),
  NODES_MAX_IDS: integer(1, 1_000, 100),
  ENTITIES_MAX_REPRESENTATIONS: integer(1, 100_000, 1_000),
  ENTITIES_READ_CONCURRENCY: integer(1, 1_000, 16),
  OPERATION_MAX_COST: integer(100, 10_000_000, 20_000),
  UPSTREAM_CALL_BUDGET: integer(1, 10_000, 100),
  WEBHOOK_SECRETS: optionalString.pipe(
    commaList.pipe(z.array(z.string().min(16, 'each secret needs at least 16 characters')).min(1)).optional(),
  ),
  WEBHOOK_TOLERANCE_S: integer(1, 3600, 300),
  EVENTS_BACKEND: z.enum(['sqlite', 'redis']).default('sqlite'),
  DATA_DIR: z.string().min(1).default('./data'),
  REDIS_URL: optionalString.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  REDIS_SENTINELS: optionalString.pipe(
    commaList
      .pipe(
        z
          .array(
            z
              .string()
              .regex(/^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9A-Fa-f:.]+\]:\d{1,5}$/, 'each sentinel is host:port')
              .refine(
                (entry) => Number(entry.slice(entry.lastIndexOf(':') + 1)) <= 65_535,
                'port above 65535',
              ),
          )
          .min(1),
      )
      .optional(),
  ),
  REDIS_SENTINEL_MASTER: optionalString,
  REDIS_MIN_REPLICAS_ACK: integer(0, 16, 0),
  REDIS_REPLICAS_ACK_TIMEOUT_MS: integer(10, 60_000, 1_000),
  REDIS_CACHE_URL: optionalString.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  EVENTS_RETENTION_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 365)
    .default(168),
  EVENTS_RETENTION_COUNT: integer(100, 10_000_000, 100_000),
  WS_MAX_PAYLOAD_BYTES: integer(1024, 1_048_576, 16_384),
  WS_CONNECTION_INIT_TIMEOUT_MS: integer(100, 60_000, 5_000),
  WS_MAX_SUBSCRIPTIONS_PER_SOCKET: integer(1, 1_000, 20),
  SSE_MAX_UNOPENED_STREAMS_PER_CLIENT: integer(1, 1_000, 10),
  HTTP_HEADERS_TIMEOUT_MS: integer(100, 120_000, 10_000),
  HTTP_REQUEST_TIMEOUT_MS: integer(100, 600_000, 30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: integer(100, 600_000, 5_000),
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: integer(0, 1_000_000, 256),
  TRUSTED_PROXIES: optionalString.pipe(
    commaList
      .pipe(z.array(z.string().refine(isAddressOrCidr, 'each entry is an IP address or CIDR range')))
      .optional(),
  ),
  CORS_ORIGINS: optionalString.pipe(
    commaList
      .pipe(
        z.array(
          z
            .url({ protocol: /^https?$/ })
            .refine(
              (origin) => new URL(origin).origin === origin,
              'each origin is scheme://host[:port], no path',
            ),
        ),
      )
      .optional(),
  ),
  CARD_CACHE_TTL_MS: integer(0, 86_400_000, 300_000),
  CARD_CACHE_MAX_ENTRIES: integer(1, 10_000_000, 100_000),
  WS_MAX_BUFFERED_BYTES: integer(16_384, 1_073_741_824, 1_048_576),
  METRICS_PORT: port.default(9464),
  METRICS_HOST: optionalString,
  METRICS_VAULT_LABELS: onOff,
  ...otelEnvShape,
  AUTH_JWT_SECRET: optionalString.pipe(z.string().min(32, 'needs at least 32 characters').optional()),
  AUTH_JWKS_URL: optionalString.pipe(url.optional()),
  AUTH_ISSUER: optionalString,
  AUTH_AUDIENCE: optionalString,
  PERSISTED_OPERATIONS: z.enum(['off', 'allow', 'require']).default('allow'),
  PERSISTED_OPERATIONS_MANIFEST: optionalString,
  APQ_TTL_S: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(86_400),
  APQ_MAX_ENTRIES: integer(1, 1_000_000, 1_000),
  APQ_MAX_BYTES: integer(65_536, 1_073_741_824, 16_777_216),
  GRAPHIQL: onOff,
  INTROSPECTION: onOff,
  FIELD_SUGGESTIONS: onOff,
  GRAPHQL_JIT: onOff,
  GRAPHQL_LEAN_HTTP: onOff,
  FEDERATION: onOff,
});

const envSchema = envObject.superRefine((env, ctx) => {
  if (env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS) {
    ctx.addIssue({
      code: 'custom',
      path: ['HTTP_HEADERS_TIMEOUT_MS'],
      message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS',
    });
  }
  if (env.NODE_ENV === 'production') refuseDevelopmentDefaults(env, ctx);
  // A router sends operations it plans itself (`_entities`, subgraph fetches): no manifest holds them.
  if (env.FEDERATION === 'on' && env.PERSISTED_OPERATIONS === 'require') {
    ctx.addIssue({
      code: 'custom',
      path: ['PERSISTED_OPERATIONS'],
      message: 'must be allow or off with FEDERATION=on: the router sends operations of its own',
    });
  }
  if (env.UPSTREAM === 'remote') {
    for (const key of [
      'CARD_INTERFACE_URL',
      'ACCOUNT_UPDATER_URL',
      'CARD_ATTRIBUTES_URL',
      'ACCOUNTS_URL',
      'TOKEN_URL',
      'UPSTREAM_CREDENTIALS',
      'WEBHOOK_SECRETS',
    ] as const) {
      if (env[key] === undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: 'required when UPSTREAM=remote' });
    }
    if (!env.AUTH_JWT_SECRET && !env.AUTH_JWKS_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['AUTH_JWT_SECRET'],
        message: 'AUTH_JWT_SECRET or AUTH_JWKS_URL is required when UPSTREAM=remote',
      });
    }
  }
  if (env.UPSTREAM_CA_FILE && !env.UPSTREAM_PROXY) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTREAM_CA_FILE'],
      message: 'is trusted for the outbound proxy only: set UPSTREAM_PROXY too',
    });
  }
  if (env.UPSTREAM_PROXY) {
    const known = env.UPSTREAM_CREDENTIALS ?? (env.UPSTREAM === 'remote' ? {} : SANDBOX_CREDENTIALS);
    for (const vault of Object.keys(env.UPSTREAM_PROXY.vaults)) {
      if (!Object.hasOwn(known, vault)) {
        ctx.addIssue({
          code: 'custom',
          path: ['UPSTREAM_PROXY'],
          message: `names vault ${vault}, which has no UPSTREAM_CREDENTIALS`,
        });
      }
    }
  }
  if (env.EVENTS_BACKEND === 'redis' && !env.REDIS_URL) {
    ctx.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'required when EVENTS_BACKEND=redis' });
  }
  if ((env.REDIS_SENTINELS === undefined) !== (env.REDIS_SENTINEL_MASTER === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [env.REDIS_SENTINELS === undefined ? 'REDIS_SENTINELS' : 'REDIS_SENTINEL_MASTER'],
      message: 'REDIS_SENTINELS and REDIS_SENTINEL_MASTER go together',
    });
  }
  if (env.AUTH_JWT_SECRET && env.AUTH_JWKS_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWKS_URL'],
      message: 'set AUTH_JWT_SECRET or AUTH_JWKS_URL, not both',
    });
  }
});

/**
 * `NODE_ENV=production`: an image started without `UPSTREAM` would otherwise run the embedded sandbox
 * with the well-known development secret, so anyone could sign tokens for every vault. Refuses that,
 * the development secret itself, a JWT secret with too few distinct characters, `http://` for the
 * JWKS, upstream and token addresses (loopback excepted) and the sandbox client credentials of
 * contract §2.
 */
function refuseDevelopmentDefaults(env: z.infer<typeof envObject>, ctx: z.RefinementCtx): void {
  if (env.UPSTREAM === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTREAM'],
      message: 'required when NODE_ENV=production (remote, or embedded for a sandbox-only deployment)',
    });
  }
  if (env.AUTH_JWT_SECRET === EMBEDDED_DEV_JWT_SECRET) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_SECRET'],
      message: 'the development secret is refused when NODE_ENV=production',
    });
  } else if (env.UPSTREAM === 'embedded' && !env.AUTH_JWT_SECRET && !env.AUTH_JWKS_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_SECRET'],
      message:
        'AUTH_JWT_SECRET or AUTH_JWKS_URL is required when NODE_ENV=production (the development secret is refused)',
    });
  }
  for (const key of HTTPS_IN_PRODUCTION) {
    const value = env[key];
    if (
      value !== undefined &&
      new URL(value).protocol === 'http:' &&
      !isLoopbackHost(new URL(value).hostname)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message:
          'http:// is refused when NODE_ENV=production (use https://; only a loopback host, localhost, 127.0.0.0/8 or [::1], may use http://)',
      });
    }
  }
  // The proxy's user and password travel in the tunnel request (sandbox contract §8: an https:// proxy).
  const proxies = env.UPSTREAM_PROXY
    ? [
        ...(env.UPSTREAM_PROXY.all ? [env.UPSTREAM_PROXY.all] : []),
        ...Object.values(env.UPSTREAM_PROXY.vaults),
      ]
    : [];
  if (
    proxies.some(
      (address) => new URL(address).protocol === 'http:' && !isLoopbackHost(new URL(address).hostname),
    )
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTREAM_PROXY'],
      message:
        'http:// is refused when NODE_ENV=production (the proxy credentials would travel in clear; use https://)',
    });
  }
  if (
    env.AUTH_JWT_SECRET !== undefined &&
    new Set(env.AUTH_JWT_SECRET).size < JWT_SECRET_MIN_DISTINCT_CHARACTERS
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_SECRET'],
      message: `too weak for NODE_ENV=production: needs at least ${JWT_SECRET_MIN_DISTINCT_CHARACTERS} distinct characters (use a random secret, e.g. openssl rand -hex 32)`,
    });
  }
  const sandboxIds = new Set(Object.values(SANDBOX_CREDENTIALS).map((c) => c.clientId));
  const sandboxSecrets = new Set(Object.values(SANDBOX_CREDENTIALS).map((c) => c.clientSecret));
  const credentials = Object.values(env.UPSTREAM_CREDENTIALS ?? {});
  if (credentials.some((c) => sandboxIds.has(c.clientId) || sandboxSecrets.has(c.clientSecret))) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTREAM_CREDENTIALS'],
      message: 'the sandbox client credentials (sandbox contract §2) are refused when NODE_ENV=production',
    });
  }
}

function fail(error: z.ZodError): never {
  const lines = error.issues.map((issue) => `  ${issue.path.join('.') || '(environment)'}: ${issue.message}`);
  throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
}

/** The trace settings of {@link Config} from the parsed `OTEL_*` variables; `{}` when tracing is off. */
function tracingConfig(e: z.output<z.ZodObject<typeof otelEnvShape>>): { tracing?: TracingConfig } {
  const endpoint =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (e.OTEL_EXPORTER_OTLP_ENDPOINT
      ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`
      : undefined);
  if (!endpoint || e.OTEL_SDK_DISABLED === 'true' || e.OTEL_TRACES_EXPORTER === 'none') return {};
  return {
    tracing: {
      endpoint,
      protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || e.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf',
      headers: { ...e.OTEL_EXPORTER_OTLP_HEADERS, ...e.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
      timeoutMs: e.OTEL_EXPORTER_OTLP_TIMEOUT,
      serviceName: e.OTEL_SERVICE_NAME ?? 'cardgraph',
      resourceAttributes: e.OTEL_RESOURCE_ATTRIBUTES,
      sampler: e.OTEL_TRACES_SAMPLER,
      samplerRatio: e.OTEL_TRACES_SAMPLER_ARG,
      scheduleDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
      trustClientTrace: e.OTEL_TRUST_CLIENT_TRACE === 'on',
    },
  };
}

/** The token request and outbound proxy settings of {@link UpstreamClientSettings} from the parsed variables. */
function upstreamConnection(
  e: z.output<typeof envObject>,
): Pick<UpstreamClientSettings, 'tokenAuth' | 'tokenScope' | 'proxy'> {
  return {
    tokenAuth: e.UPSTREAM_TOKEN_AUTH,
    ...(e.UPSTREAM_TOKEN_SCOPE ? { tokenScope: e.UPSTREAM_TOKEN_SCOPE } : {}),
    ...(e.UPSTREAM_PROXY
      ? {
          proxy: {
            ...e.UPSTREAM_PROXY,
            areas: e.UPSTREAM_PROXY_AREAS,
            ...(e.UPSTREAM_CA_FILE ? { caPem: e.UPSTREAM_CA_FILE } : {}),
          },
        }
      : {}),
  };
}

/**
 * Parses the gateway configuration.
 * @param env variables to read; `process.env` by default (tests pass their own object).
 * @throws ConfigError naming each bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) fail(parsed.error);
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const upstreamMode = e.UPSTREAM ?? 'embedded';
  const embedded = upstreamMode === 'embedded';
  // Development exposes everything a person exploring the graph needs; production only what is asked.
  const exposed = (value: 'on' | 'off' | undefined) => (value ?? (production ? 'off' : 'on')) === 'on';
  const jwtSecret = e.AUTH_JWT_SECRET ?? (e.AUTH_JWKS_URL ? undefined : EMBEDDED_DEV_JWT_SECRET);
  return {
    environment: production ? 'production' : 'development',
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    upstream: embedded
      ? {
          mode: 'embedded',
          sandbox: {
            port: e.SANDBOX_PORT,
            webhookDelayMs: e.SANDBOX_WEBHOOK_DELAY_MS,
            wire: e.SANDBOX_WIRE,
            ...(e.SANDBOX_DUPLICATE_CARD_CHECK?.length
              ? { duplicateCardCheckVaults: e.SANDBOX_DUPLICATE_CARD_CHECK }
              : {}),
          },
          credentials: e.UPSTREAM_CREDENTIALS ?? SANDBOX_CREDENTIALS,
          timeoutMs: e.UPSTREAM_TIMEOUT_MS,
          ...upstreamConnection(e),
        }
      : {
          mode: 'remote',
          // Required in remote mode (envSchema's refinement).
          cardInterfaceUrl: e.CARD_INTERFACE_URL!,
          accountUpdaterUrl: e.ACCOUNT_UPDATER_URL!,
          cardAttributesUrl: e.CARD_ATTRIBUTES_URL!,
          accountsUrl: e.ACCOUNTS_URL!,
          tokenUrl: e.TOKEN_URL!,
          credentials: e.UPSTREAM_CREDENTIALS!,
          timeoutMs: e.UPSTREAM_TIMEOUT_MS,
          ...upstreamConnection(e),
        },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    operationLimits: {
      nodesMaxIds: e.NODES_MAX_IDS,
      entitiesMaxRepresentations: e.ENTITIES_MAX_REPRESENTATIONS,
      entitiesReadConcurrency: e.ENTITIES_READ_CONCURRENCY,
      maxCost: e.OPERATION_MAX_COST,
      upstreamCallBudget: e.UPSTREAM_CALL_BUDGET,
    },
    webhooks: {
      secrets: e.WEBHOOK_SECRETS ?? [`whsec_${randomBytes(24).toString('base64url')}`],
      toleranceS: e.WEBHOOK_TOLERANCE_S,
    },
    events: {
      backend: e.EVENTS_BACKEND,
      dataDir: e.DATA_DIR,
      ...(e.REDIS_URL ? { redisUrl: e.REDIS_URL } : {}),
      ...(e.REDIS_SENTINELS && e.REDIS_SENTINEL_MASTER
        ? {
            redisSentinel: { nodes: e.REDIS_SENTINELS.map(hostAndPort), masterName: e.REDIS_SENTINEL_MASTER },
          }
        : {}),
      redisMinReplicasAck: e.REDIS_MIN_REPLICAS_ACK,
      redisReplicasAckTimeoutMs: e.REDIS_REPLICAS_ACK_TIMEOUT_MS,
      ...(e.REDIS_CACHE_URL || e.REDIS_URL ? { cacheRedisUrl: e.REDIS_CACHE_URL ?? e.REDIS_URL } : {}),
      retentionMaxAgeMs: Math.round(e.EVENTS_RETENTION_HOURS * 3_600_000),
      retentionMaxCount: e.EVENTS_RETENTION_COUNT,
    },
    cardCache: { ttlMs: e.CARD_CACHE_TTL_MS, maxEntries: e.CARD_CACHE_MAX_ENTRIES },
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
    graphql: {
      graphiql: exposed(e.GRAPHIQL),
      introspection: exposed(e.INTROSPECTION),
      fieldSuggestions: exposed(e.FIELD_SUGGESTIONS),
      compiledExecution: e.GRAPHQL_JIT !== 'off',
      leanHttp: e.GRAPHQL_LEAN_HTTP !== 'off',
    },
    federation: { subgraph: e.FEDERATION === 'on' },
    persistedOperations: {
      mode: e.PERSISTED_OPERATIONS,
      manifestPath:
        e.PERSISTED_OPERATIONS_MANIFEST ??
        fileURLToPath(new URL('./client/generated/persisted-documents.json', import.meta.url)),
      apqTtlS: e.APQ_TTL_S,
      apqMaxEntries: e.APQ_MAX_ENTRIES,
      apqMaxBytes: e.APQ_MAX_BYTES,
    },
    metrics: {
      port: e.METRICS_PORT,
      host: e.METRICS_HOST ?? '127.0.0.1',
      vaultLabels: e.METRICS_VAULT_LABELS === 'on',
    },
    ...tracingConfig(e),
    auth: {
      ...(jwtSecret ? { jwtSecret } : {}),
      ...(e.AUTH_JWKS_URL ? { jwksUrl: e.AUTH_JWKS_URL } : {}),
      ...(e.AUTH_ISSUER ? { issuer: e.AUTH_ISSUER } : {}),
      ...(e.AUTH_AUDIENCE ? { audience: e.AUTH_AUDIENCE } : {}),
    },
  };
}

/**
 * `config` on the development sandbox listening at `sandboxUrl` (its real address, e.g.
 * `http://127.0.0.1:4010`): the upstream addresses of contract §1 under it. src/dev.ts calls this
 * once the sandbox has started.
 */
export function onSandbox(config: Config, sandboxUrl: string): GatewayConfig {
  const { credentials, timeoutMs, tokenAuth, tokenScope, proxy } = config.upstream;
  return {
    ...config,
    upstream: {
      mode: 'embedded',
      cardInterfaceUrl: `${sandboxUrl}/card-interface`,
      accountUpdaterUrl: `${sandboxUrl}/account-updater`,
      cardAttributesUrl: `${sandboxUrl}/card-attributes`,
      accountsUrl: `${sandboxUrl}/accounts`,
      tokenUrl: `${sandboxUrl}/oauth/token`,
      credentials,
      timeoutMs,
      tokenAuth,
      ...(tokenScope === undefined ? {} : { tokenScope }),
      ...(proxy === undefined ? {} : { proxy }),
    },
  };
}

/**
 * `config` as the production gateway (src/main.ts) runs it.
 * @throws ConfigError for `UPSTREAM=embedded` (unset in development): the sandbox is no part of the
 *   production gateway; `npm start` (src/dev.ts) runs it with the gateway.
 */
export function gatewayConfig(config: Config): GatewayConfig {
  if ('tokenUrl' in config.upstream) return config as GatewayConfig;
  throw new ConfigError(
    'Invalid configuration:\n  UPSTREAM: embedded runs the development sandbox, which is not part of the ' +
      'production gateway: start it with `npm start` (src/dev.ts), or set UPSTREAM=remote and the upstream addresses',
  );
}

/** Settings of the standalone sandbox (`npm run sandbox`), see {@link loadSandboxConfig}. */
export interface SandboxConfig {
  port: number;
  host: string;
  logLevel: string;
  webhookDelayMs: number;
  /** The wire reading the sandbox answers in: `SANDBOX_WIRE` (`documented` by default). */
  wire: SandboxWire;
  /** Vaults with the card interface's Duplicate Card Check on: `SANDBOX_DUPLICATE_CARD_CHECK` (none by default). */
  duplicateCardCheckVaults?: string[];
  /** Optional endpoint registered for both vaults at start: `SANDBOX_WEBHOOK_URL`. */
  webhookUrl?: string;
  /** Its signing secret: `SANDBOX_WEBHOOK_SECRET` (generated when unset). */
  webhookSecret: string;
  /** Server spans per request, joining the caller's `traceparent` (`OTEL_*`, as for the gateway). */
  tracing?: TracingConfig;
}

const sandboxEnvSchema = z.object({
  SANDBOX_PORT: port.default(4010),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SANDBOX_WEBHOOK_DELAY_MS: integer(0, 600_000, 1000),
  SANDBOX_WIRE: z.enum(SANDBOX_WIRES).default('documented'),
  SANDBOX_DUPLICATE_CARD_CHECK: commaList
    .pipe(z.array(z.string().regex(VAULT_ID_PATTERN, 'each must be an 11-character vault id')))
    .optional(),
  SANDBOX_WEBHOOK_URL: optionalString.pipe(url.optional()),
  SANDBOX_WEBHOOK_SECRET: optionalString.pipe(z.string().min(16).optional()),
  ...otelEnvShape,
});

/**
 * Parses the standalone sandbox's configuration.
 * @throws ConfigError naming each bad variable.
 */
export function loadSandboxConfig(env: Record<string, string | undefined> = process.env): SandboxConfig {
  const parsed = sandboxEnvSchema.safeParse(env);
  if (!parsed.success) fail(parsed.error);
  const e = parsed.data;
  return {
    port: e.SANDBOX_PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    webhookDelayMs: e.SANDBOX_WEBHOOK_DELAY_MS,
    wire: e.SANDBOX_WIRE,
    ...(e.SANDBOX_DUPLICATE_CARD_CHECK?.length
      ? { duplicateCardCheckVaults: e.SANDBOX_DUPLICATE_CARD_CHECK }
      : {}),
    ...(e.SANDBOX_WEBHOOK_URL ? { webhookUrl: e.SANDBOX_WEBHOOK_URL } : {}),
    webhookSecret: e.SANDBOX_WEBHOOK_SECRET ?? `whsec_${randomBytes(24).toString('base64url')}`,
    ...tracingConfig({ ...e, OTEL_SERVICE_NAME: e.OTEL_SERVICE_NAME ?? 'cardgraph-sandbox' }),
  };
}
