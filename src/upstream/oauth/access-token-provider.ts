import type { VaultCredentials } from '../../config.ts';
import { tokenResponse } from '../../contracts/oauth.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { UpstreamError } from '../errors.ts';
import type { UpstreamHttp } from '../http.ts';

/**
 * Token endpoint answer (sandbox contract §2):
 * `{"access_token","token_type":"Bearer","expires_in":1200,"scope"}`, `expires_in` in seconds.
 */
const tokenResponseSchema = tokenResponse.transform((body) => ({
  accessToken: body.access_token,
  expiresInS: body.expires_in,
}));

/** Seconds before the announced expiry at which a cached token stops being handed out. */
const EXPIRY_SKEW_S = 60;

/**
 * Options of {@link AccessTokenProvider}.
 * - `tokenUrl`: the OAuth 2.0 token endpoint (contract §1, §2).
 * - `credentials`: client id and secret per vault id (tenant).
 * - `http`: the shared upstream HTTP client.
 * - `scope`: space-separated scopes to request; absent, the endpoint grants its default (all six in the
 *   sandbox, docs/gap-decisions.md "Scopes per endpoint").
 * - `clock`: current time in ms since the epoch; `Date.now` by default (tests advance it).
 * - `metrics`: counts each token request sent (`cardgraph_upstream_token_fetches_total`).
 */
export interface AccessTokenProviderOptions {
  tokenUrl: string;
  credentials: Record<string, VaultCredentials>;
  http: UpstreamHttp;
  scope?: string;
  clock?: () => number;
  metrics?: Metrics;
}

interface CachedToken {
  token: string;
  /** ms since the epoch after which the token is no longer handed out. */
  refreshAt: number;
}

/**
 * OAuth 2.0 client credentials grant per vault (contract §2; RFC 6749 §4.4) with HTTP Basic client
 * authentication (RFC 6749 §2.3.1).
 *
 * Tokens are cached per vault until `expires_in` minus 60 s (or half the lifetime for tokens shorter
 * than two minutes). Concurrent callers for a vault with no valid token share one token request.
 * A failed token request is not cached: the next caller tries again.
 */
export class AccessTokenProvider {
  readonly #tokenUrl: string;
  readonly #credentials: Record<string, VaultCredentials>;
  readonly #http: UpstreamHttp;
  readonly #scope: string | undefined;
  readonly #clock: () => number;
  readonly #metrics: Metrics | undefined;
  readonly #cache = new Map<string, CachedToken>();
  readonly #inFlight = new Map<string, Promise<string>>();

  constructor(opts: AccessTokenProviderOptions) {
    this.#tokenUrl = opts.tokenUrl;
    this.#credentials = opts.credentials;
    this.#http = opts.http;
    this.#scope = opts.scope;
    this.#clock = opts.clock ?? Date.now;
    this.#metrics = opts.metrics;
  }

  /** Configured vault ids (the readiness probe checks each). */
  vaults(): string[] {
    return Object.keys(this.#credentials);
  }

  /**
   * A bearer token for the vault: the cached one while fresh, else a new one from the token endpoint.
   * @throws UpstreamError area `oauth`: code `unknown-vault` (no status, not retryable) when no
   *   credentials are configured for `vault`; the endpoint's error (`invalid_client` with 401,
   *   `invalid_scope` with 400, …) or a transport code otherwise.
   */
  getToken(vault: string): Promise<string> {
    const cached = this.#cache.get(vault);
    if (cached && this.#clock() < cached.refreshAt) return Promise.resolve(cached.token);
    const pending = this.#inFlight.get(vault);
    if (pending) return pending;
    const credentials = Object.hasOwn(this.#credentials, vault) ? this.#credentials[vault] : undefined;
    if (!credentials) {
      return Promise.reject(
        new UpstreamError({
          area: 'oauth',
          code: 'unknown-vault',
          retryable: false,
          detail: 'no client credentials',
        }),
      );
    }
    const request = this.#fetchToken(vault, credentials)
      .then(
        (token) => {
          this.#metrics?.tokenFetches.inc({ vault, outcome: 'success' });
          return token;
        },
        (error: unknown) => {
          this.#metrics?.tokenFetches.inc({ vault, outcome: 'failure' });
          throw error;
        },
      )
      .finally(() => this.#inFlight.delete(vault));
    this.#inFlight.set(vault, request);
    return request;
  }

  /**
   * Drops `token` from the cache of `vault` after the upstream rejected it (401), so the next
   * {@link getToken} fetches a new one. A token other than the cached one is ignored: another caller
   * already replaced it.
   */
  invalidate(vault: string, token: string): void {
    if (this.#cache.get(vault)?.token === token) this.#cache.delete(vault);
  }

  async #fetchToken(vault: string, credentials: VaultCredentials): Promise<string> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (this.#scope) form.set('scope', this.#scope);
    const requestedAt = this.#clock();
    const { data } = await this.#http.request({
      area: 'oauth',
      method: 'POST',
      url: this.#tokenUrl,
      headers: {
        authorization: basicAuthorization(credentials),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: form.toString(),
      expectStatus: [200],
      schema: tokenResponseSchema,
    });
    const lifetimeS =
      data.expiresInS > 2 * EXPIRY_SKEW_S ? data.expiresInS - EXPIRY_SKEW_S : data.expiresInS / 2;
    this.#cache.set(vault, { token: data.accessToken, refreshAt: requestedAt + lifetimeS * 1000 });
    return data.accessToken;
  }
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before Base64. */
function basicAuthorization(credentials: VaultCredentials): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  const pair = `${encode(credentials.clientId)}:${encode(credentials.clientSecret)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}
