import type { Tracer } from '@opentelemetry/api';
import type { UpstreamConfig } from '../config.ts';
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
  const http = createUpstreamHttp({ timeoutMs: config.timeoutMs, logger, ...telemetry });
  const tokens = new AccessTokenProvider({
    tokenUrl: config.tokenUrl,
    credentials: config.credentials,
    http,
    ...(telemetry.metrics ? { metrics: telemetry.metrics } : {}),
  });
  const clientsOver = (clientHttp: UpstreamHttp): Upstream => {
    /** One area's client over `clientHttp`, its failures mapped through the area's error table. */
    const area = <Client extends object>(
      AreaClient: new (opts: UpstreamClientOptions) => Client,
      baseUrl: string,
      errors: UpstreamErrorTable,
    ) => withGatewayErrors(new AreaClient({ baseUrl, tokens, http: clientHttp }), errors);
    return {
      http: clientHttp,
      tokens,
      cardInterface: area(CardInterfaceClient, config.cardInterfaceUrl, CARD_INTERFACE_ERRORS),
      accountUpdater: area(AccountUpdaterClient, config.accountUpdaterUrl, ACCOUNT_UPDATER_ERRORS),
      networkTokens: area(NetworkTokensClient, config.accountUpdaterUrl, NETWORK_TOKEN_ERRORS),
      cardAttributes: area(CardAttributesClient, config.cardAttributesUrl, CARD_ATTRIBUTES_ERRORS),
      accounts: area(AccountsClient, config.accountsUrl, ACCOUNTS_ERRORS),
      close: (graceMs) => http.close(graceMs),
      withBudget: (budget) => clientsOver(budgetedHttp(http, budget)),
    };
  };
  return clientsOver(http);
}
