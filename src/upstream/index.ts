import type { Tracer } from '@opentelemetry/api';
import type { UpstreamConfig } from '../config/index.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { AccountUpdaterClient } from './account-updater/client.ts';
import { ACCOUNT_UPDATER_ERRORS } from './account-updater/error-table.ts';
import { AccountsClient } from './accounts/client.ts';
import { ACCOUNTS_ERRORS } from './accounts/error-table.ts';
import type { UpstreamClientOptions } from './authorized-request.ts';
import { budgetedHttp, type UpstreamCallBudget } from './budget.ts';
import { CardAttributesClient } from './card-attributes/client.ts';
import { CARD_ATTRIBUTES_ERRORS } from './card-attributes/error-table.ts';
import { CardInterfaceClient } from './card-interface/client.ts';
import { CARD_INTERFACE_ERRORS } from './card-interface/error-table.ts';
import { type UpstreamErrorTable, withGatewayErrors } from './gateway-errors.ts';
import { createUpstreamHttp, type UpstreamHttp } from './http.ts';
import { NetworkTokensClient } from './network-tokens/client.ts';
import { NETWORK_TOKEN_ERRORS } from './network-tokens/error-table.ts';
import { AccessTokenProvider } from './oauth/access-token-provider.ts';

export type * from './account-updater/client.ts';
export { AccountUpdaterClient } from './account-updater/client.ts';
export type * from './accounts/client.ts';
export { AccountsClient } from './accounts/client.ts';
export type { UpstreamClientOptions } from './authorized-request.ts';
export { budgetedHttp, UpstreamCallBudget } from './budget.ts';
export type * from './card-attributes/client.ts';
export { CardAttributesClient } from './card-attributes/client.ts';
export type * from './card-interface/client.ts';
export { CardInterfaceClient } from './card-interface/client.ts';
export { InvalidArgumentError, type UpstreamArea, UpstreamError } from './errors.ts';
export { createUpstreamHttp, type UpstreamHttp, type UpstreamHttpOptions } from './http.ts';
export type * from './network-tokens/client.ts';
export { NetworkTokensClient } from './network-tokens/client.ts';
export { AccessTokenProvider, type AccessTokenProviderOptions } from './oauth/access-token-provider.ts';

/**
 * The upstream clients wired together: one pooled HTTP client, one token provider shared by all
 * clients, and one client per area of the spec: card interface, account updater v1, network tokens
 * (same base address as account updater v1), card attributes and organization members. `close`
 * closes the pool (waiting for in-flight requests).
 */
export interface Upstream {
  http: UpstreamHttp;
  tokens: AccessTokenProvider;
  cardInterface: CardInterfaceClient;
  accountUpdater: AccountUpdaterClient;
  networkTokens: NetworkTokensClient;
  cardAttributes: CardAttributesClient;
  accounts: AccountsClient;
  /** Closes the pool: in-flight calls may finish for `graceMs` (default: their deadline), then are aborted. */
  close(graceMs?: number): Promise<void>;
  /**
   * The same clients with every call charged to `budget` (one operation's), sharing this pool and
   * token cache (token requests are shared across operations, so they are not charged).
   */
  withBudget(budget: UpstreamCallBudget): Upstream;
}

/**
 * Builds the upstream clients from the gateway configuration (`UpstreamConfig`: base addresses of
 * contract §1, token endpoint and per-vault credentials of contract §2, `timeoutMs` per request).
 * Pass the addresses of the started sandbox in embedded mode. This is the client boundary of the
 * gateway: each client rejects with the typed errors of src/errors.ts, mapped once through its area's
 * table (`<area>/error-table.ts`, see {@link withGatewayErrors}). `telemetry` adds upstream call
 * metrics and spans, and token fetch counts.
 */
export function createUpstream(
  config: UpstreamConfig,
  logger: Logger,
  telemetry: { metrics?: Metrics; tracer?: Tracer } = {},
): Upstream {
  const http = createUpstreamHttp({
    timeoutMs: config.timeoutMs,
    logger,
    ...telemetry,
    ...(config.proxy ? { proxy: config.proxy } : {}),
  });
  const tokens = new AccessTokenProvider({
    tokenUrl: config.tokenUrl,
    credentials: config.credentials,
    http,
    clientAuth: config.tokenAuth,
    ...(config.tokenScope ? { scope: config.tokenScope } : {}),
    ...(telemetry.metrics ? { metrics: telemetry.metrics } : {}),
  });
  return new UpstreamClients(config, tokens, http, http);
}

/**
 * The area clients of {@link Upstream}, each described once: its class, the configuration member
 * holding its base address (contract §1) and its error table.
 */
const AREAS = {
  cardInterface: { Client: CardInterfaceClient, baseUrl: 'cardInterfaceUrl', errors: CARD_INTERFACE_ERRORS },
  accountUpdater: {
    Client: AccountUpdaterClient,
    baseUrl: 'accountUpdaterUrl',
    errors: ACCOUNT_UPDATER_ERRORS,
  },
  // Network tokens share account updater v1's base address (spec "Endpoints").
  networkTokens: { Client: NetworkTokensClient, baseUrl: 'accountUpdaterUrl', errors: NETWORK_TOKEN_ERRORS },
  cardAttributes: {
    Client: CardAttributesClient,
    baseUrl: 'cardAttributesUrl',
    errors: CARD_ATTRIBUTES_ERRORS,
  },
  accounts: { Client: AccountsClient, baseUrl: 'accountsUrl', errors: ACCOUNTS_ERRORS },
} as const satisfies Record<
  string,
  {
    Client: new (options: UpstreamClientOptions) => object;
    baseUrl: keyof UpstreamConfig;
    errors: UpstreamErrorTable;
  }
>;

type AreaName = keyof typeof AREAS;

/**
 * {@link Upstream} over one `UpstreamHttp` (`http`: the pool, or an operation's budgeted view of it):
 * each area's client is built on its first use, so an operation's clients ({@link Upstream.withBudget},
 * one set per operation and per live subscriber) cost nothing until a resolver calls the upstream,
 * which a card read served from the card read cache never does.
 */
class UpstreamClients implements Upstream {
  declare readonly cardInterface: CardInterfaceClient;
  declare readonly accountUpdater: AccountUpdaterClient;
  declare readonly networkTokens: NetworkTokensClient;
  declare readonly cardAttributes: CardAttributesClient;
  declare readonly accounts: AccountsClient;
  readonly http: UpstreamHttp;
  readonly tokens: AccessTokenProvider;
  readonly #config: UpstreamConfig;
  /** The pooled client every budgeted view shares; `close` closes it. */
  readonly #pool: UpstreamHttp;
  readonly #built: Partial<Record<AreaName, object>> = {};

  static {
    // One getter per area (the `declare`d members above), building its client on first use.
    for (const name of Object.keys(AREAS) as AreaName[]) {
      Object.defineProperty(UpstreamClients.prototype, name, {
        get(this: UpstreamClients) {
          return this.#client(name);
        },
      });
    }
  }

  constructor(config: UpstreamConfig, tokens: AccessTokenProvider, http: UpstreamHttp, pool: UpstreamHttp) {
    this.#config = config;
    this.tokens = tokens;
    this.http = http;
    this.#pool = pool;
  }

  close(graceMs?: number): Promise<void> {
    return this.#pool.close(graceMs);
  }

  withBudget(budget: UpstreamCallBudget): Upstream {
    return new UpstreamClients(this.#config, this.tokens, budgetedHttp(this.#pool, budget), this.#pool);
  }

  /** This set's client of `name` over its `http`, failures mapped through the area's error table. */
  #client(name: AreaName): object {
    const { Client, baseUrl, errors } = AREAS[name];
    this.#built[name] ??= withGatewayErrors(
      new Client({ baseUrl: this.#config[baseUrl] as string, tokens: this.tokens, http: this.http }),
      errors,
    );
    return this.#built[name];
  }
}
