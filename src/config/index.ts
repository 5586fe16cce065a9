import { z } from 'zod';
import { type AuthConfig, authConfig, authSettings, refineAuth } from './auth.ts';
import { type EventsConfig, eventsConfig, eventsSettings, refineEvents } from './events.ts';
import type { SettingsSection } from './fields.ts';
import {
  type FederationConfig,
  type GraphqlConfig,
  graphqlConfig,
  graphqlSettings,
  type PersistedOperationsConfig,
  persistedOperationsConfig,
  persistedOperationsSettings,
  refineGraphql,
} from './graphql.ts';
import {
  type CardCacheConfig,
  cardCacheConfig,
  cardCacheSettings,
  limitsSettings,
  type OperationLimitsConfig,
  operationLimitsConfig,
} from './limits.ts';
import {
  type MetricsConfig,
  metricsConfig,
  metricsSettings,
  type TracingConfig,
  tracingConfig,
  tracingSettings,
} from './observability.ts';
import { ConfigError, parseSettings } from './parse.ts';
import { productionSettings, refuseDevelopmentDefaults } from './production.ts';
import { proxyConfig, proxySettings, refineProxy } from './proxy.ts';
import { sandboxSettings, sandboxSettingsOf } from './sandbox.ts';
import { type ServerConfig, serverConfig, serverSettings } from './server.ts';
import {
  type HttpConfig,
  refineTransports,
  type SseConfig,
  transportsConfig,
  transportsSettings,
  type WebSocketConfig,
} from './transports.ts';
import {
  type EmbeddedUpstreamConfig,
  knownCredentials,
  refineUpstream,
  type UpstreamConfig,
  upstreamConfig,
  upstreamSettings,
} from './upstream.ts';
import { refineWebhooks, type WebhooksConfig, webhooksConfig, webhooksSettings } from './webhooks.ts';

/**
 * The gateway's configuration, composed from one module per concern (src/config/*.ts, each with its
 * variables as a zod shape with descriptions and defaults, its part of {@link Config} and its
 * cross-variable rules). This module is the one reader of `process.env`; a bad value fails at start
 * with a {@link ConfigError} naming the variable. An empty value is unset, for every variable.
 * `.env.example` is generated from the same shapes (`npm run env-example`, scripts/env-example.ts).
 */

export { EMBEDDED_DEV_JWT_SECRET } from './auth.ts';
export type { SettingsSection } from './fields.ts';
export type { TracingConfig } from './observability.ts';
export { ConfigError } from './parse.ts';
export { isLoopbackHost, JWT_SECRET_MIN_DISTINCT_CHARACTERS } from './production.ts';
export { PROXIABLE_AREAS, type ProxiableArea, type UpstreamProxyConfig } from './proxy.ts';
export type { SandboxSettings } from './sandbox.ts';
export {
  type EmbeddedUpstreamConfig,
  SANDBOX_CREDENTIALS,
  type UpstreamAddresses,
  type UpstreamConfig,
  type VaultCredentials,
} from './upstream.ts';

/** The gateway's variables by concern, in the order `.env.example` lists them. */
export const GATEWAY_SETTINGS: readonly SettingsSection[] = [
  productionSettings,
  serverSettings,
  upstreamSettings,
  sandboxSettings,
  proxySettings,
  limitsSettings,
  webhooksSettings,
  eventsSettings,
  cardCacheSettings,
  transportsSettings,
  metricsSettings,
  tracingSettings,
  persistedOperationsSettings,
  authSettings,
  graphqlSettings,
];

const gatewayEnv = z
  .object({
    ...productionSettings.shape,
    ...serverSettings.shape,
    ...upstreamSettings.shape,
    ...sandboxSettings.shape,
    ...proxySettings.shape,
    ...limitsSettings.shape,
    ...webhooksSettings.shape,
    ...eventsSettings.shape,
    ...cardCacheSettings.shape,
    ...transportsSettings.shape,
    ...metricsSettings.shape,
    ...tracingSettings.shape,
    ...persistedOperationsSettings.shape,
    ...authSettings.shape,
    ...graphqlSettings.shape,
  })
  .superRefine((env, ctx) => {
    refineTransports(env, ctx);
    if (env.NODE_ENV === 'production') refuseDevelopmentDefaults(env, ctx);
    refineGraphql(env, ctx);
    refineUpstream(env, ctx);
    refineWebhooks(env, ctx);
    refineAuth(env, ctx);
    refineProxy(env, new Set(Object.keys(knownCredentials(env))), ctx);
    refineEvents(env, ctx);
  });

/** A configuration whose upstream has its addresses: what buildApp (src/app.ts) starts. */
export type GatewayConfig = Config & { upstream: UpstreamConfig };

/** Gateway configuration, as produced by {@link loadConfig}. Durations in ms unless the name says s. */
export interface Config extends ServerConfig {
  /**
   * `production` when `NODE_ENV=production`: `UPSTREAM` must be explicit, the development secret and
   * the sandbox credentials are refused, and GraphiQL, introspection and field suggestions are off
   * unless turned on. `development` otherwise.
   */
  environment: 'production' | 'development';
  /**
   * The package version npm gives a script it runs (`npm_package_version`), the traces'
   * `service.version`; undefined when started without npm.
   */
  version?: string;
  /**
   * Where the upstream is: `remote` with its addresses, or `embedded`, the development sandbox, whose
   * addresses exist only once src/dev.ts has started it ({@link onSandbox}).
   */
  upstream: UpstreamConfig | EmbeddedUpstreamConfig;
  /** What one GraphQL operation may ask of the gateway and, through it, of the upstream. */
  operationLimits: OperationLimitsConfig;
  webhooks: WebhooksConfig;
  events: EventsConfig;
  /** App-wide card read cache (src/loaders/card-read-cache.ts). */
  cardCache: CardCacheConfig;
  websocket: WebSocketConfig;
  sse: SseConfig;
  http: HttpConfig;
  graphql: GraphqlConfig;
  federation: FederationConfig;
  persistedOperations: PersistedOperationsConfig;
  metrics: MetricsConfig;
  /** OpenTelemetry traces (standard `OTEL_*` variables); undefined when tracing is off. */
  tracing?: TracingConfig;
  auth: AuthConfig;
}

/**
 * Parses the gateway configuration.
 * @param env variables to read; `process.env` by default (tests pass their own object). Empty values
 *   are unset.
 * @throws ConfigError naming each bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const e = parseSettings(gatewayEnv, env);
  const production = e.NODE_ENV === 'production';
  return {
    environment: production ? 'production' : 'development',
    ...(env.npm_package_version ? { version: env.npm_package_version } : {}),
    ...serverConfig(e),
    upstream: upstreamConfig(e, sandboxSettingsOf(e), proxyConfig(e)),
    operationLimits: operationLimitsConfig(e),
    webhooks: webhooksConfig(e),
    events: eventsConfig(e),
    cardCache: cardCacheConfig(e),
    ...transportsConfig(e),
    ...graphqlConfig(e, production),
    persistedOperations: persistedOperationsConfig(e),
    metrics: metricsConfig(e),
    ...tracingConfig(e, 'cardgraph'),
    auth: authConfig(e),
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
