import type { Config } from '../config.ts';
import type { Logger } from '../lib/logger.ts';
import { AccountUpdaterClient } from './account-updater/client.ts';
import { CardInterfaceClient } from './card-interface/client.ts';
import { createUpstreamHttp, type UpstreamHttp } from './http.ts';
import { AccessTokenProvider } from './oauth/access-token-provider.ts';

export { AccountUpdaterClient } from './account-updater/client.ts';
export type * from './account-updater/types.ts';
export type { UpstreamClientOptions } from './authorized-request.ts';
export { CardInterfaceClient } from './card-interface/client.ts';
export type * from './card-interface/types.ts';
export { InvalidArgumentError, type UpstreamArea, UpstreamError } from './errors.ts';
export { createUpstreamHttp, type UpstreamHttp, type UpstreamHttpOptions } from './http.ts';
export { AccessTokenProvider, type AccessTokenProviderOptions } from './oauth/access-token-provider.ts';

/**
 * The upstream clients wired together: one pooled HTTP client, one token provider shared by all
 * clients, and the clients of the card interface and account updater v1. `close` closes the pool
 * (waiting for in-flight requests).
 */
export interface Upstream {
  http: UpstreamHttp;
  tokens: AccessTokenProvider;
  cardInterface: CardInterfaceClient;
  accountUpdater: AccountUpdaterClient;
  close(): Promise<void>;
}

/**
 * Builds the upstream clients from the gateway configuration (`Config['upstream']`: base addresses of
 * contract §1, token endpoint and per-vault credentials of contract §2, `timeoutMs` per request).
 * Pass the addresses of the started sandbox in embedded mode.
 */
export function createUpstream(config: Config['upstream'], logger: Logger): Upstream {
  const http = createUpstreamHttp({ timeoutMs: config.timeoutMs, logger });
  const tokens = new AccessTokenProvider({
    tokenUrl: config.tokenUrl,
    credentials: config.credentials,
    http,
  });
  return {
    http,
    tokens,
    cardInterface: new CardInterfaceClient({ baseUrl: config.cardInterfaceUrl, tokens, http }),
    accountUpdater: new AccountUpdaterClient({ baseUrl: config.accountUpdaterUrl, tokens, http }),
    close: () => http.close(),
  };
}
