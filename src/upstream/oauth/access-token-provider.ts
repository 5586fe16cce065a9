import type { VaultCredentials } from '../../config/index.ts';
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

/** Default {@link TokenBackoff}: 1 s after the first failure, doubling up to 30 s. */
export const DEFAULT_TOKEN_BACKOFF: Required<TokenBackoff> = { initialMs: 1_000, maxMs: 30_000 };

/**
 * Backoff after failed token requests (issue 20 item 4), per vault. After the n-th failure in a row
 * the ceiling is `min(maxMs, initialMs * 2^(n-1))` ms and the vault waits a random time between half
 * the ceiling and the ceiling ("equal jitter": replicas that failed together do not retry together,
 * and no wait is shorter than half the ceiling). A success resets it.
 */
export interface TokenBackoff {
  /** Ceiling after the first failure, ms; default 1,000. */
  initialMs?: number;
  /** Largest ceiling, ms; default 30,000. */
  maxMs?: number;
}

/**
 * Options of {@link AccessTokenProvider}.
 * - `tokenUrl`: the OAuth 2.0 token endpoint (contract §1, §2).
 * - `credentials`: client id and secret per vault id (tenant).
 * - `http`: the shared upstream HTTP client.
 * - `scope`: space-separated scopes to request; absent (the documented request, sandbox contract §8),
 *   the endpoint grants the service account's scopes (all six in the sandbox, docs/gap-decisions.md
 *   "Scopes per endpoint").
 * - `clientAuth`: `form` (default, as documented: `client_id` and `client_secret` form fields) or
 *   `basic` (HTTP Basic, RFC 6749 §2.3.1); `UPSTREAM_TOKEN_AUTH`.
 * - `backoff`: waits after failed token requests, see {@link TokenBackoff}.
 * - `clock`: current time in ms since the epoch; `Date.now` by default (tests advance it).
 * - `random`: a number in [0, 1) for the backoff's jitter; `Math.random` by default.
 * - `metrics`: counts each token request sent (`cardgraph_upstream_token_fetches_total`).
 */
export interface AccessTokenProviderOptions {
  tokenUrl: string;
  credentials: Record<string, VaultCredentials>;
  http: UpstreamHttp;
  scope?: string;
  clientAuth?: 'form' | 'basic';
  backoff?: TokenBackoff;
  clock?: () => number;
  random?: () => number;
  metrics?: Metrics;
}

interface CachedToken {
  token: string;
  /** ms since the epoch after which the token is no longer handed out. */
  refreshAt: number;
}

/** A vault whose last token requests failed. */
interface FailedVault {
  /** Failures in a row. */
  failures: number;
  /** ms since the epoch before which no new token request is sent. */
  retryAt: number;
  /** The last failure, handed to callers until `retryAt`. */
  error: UpstreamError;
}

/**
 * OAuth 2.0 client credentials grant per vault (contract §2, §8; RFC 6749 §4.4): the client id and
 * secret as form fields (documented, default) or as HTTP Basic (RFC 6749 §2.3.1).
 *
 * Tokens (20 minutes, `expires_in` 1200) are cached per vault until `expires_in` minus 60 s (or half
 * the lifetime for tokens shorter than two minutes). Token requests are single-flight per vault:
 * concurrent callers share one request, and its failure too. After a failure the vault backs off
 * ({@link TokenBackoff}): until then callers get the last failure at once, without a request, so a
 * failing token endpoint sees at most one request per vault per backoff window however many
 * operations and readiness probes ask (issue 20 item 4).
 */
export class AccessTokenProvider {
  readonly #tokenUrl: string;
  readonly #credentials: Record<string, VaultCredentials>;
  readonly #http: UpstreamHttp;
  readonly #scope: string | undefined;
  readonly #clientAuth: 'form' | 'basic';
  readonly #backoff: Required<TokenBackoff>;
  readonly #clock: () => number;
  readonly #random: () => number;
  readonly #metrics: Metrics | undefined;
  readonly #cache = new Map<string, CachedToken>();
  readonly #inFlight = new Map<string, Promise<string>>();
  readonly #failed = new Map<string, FailedVault>();

  constructor(opts: AccessTokenProviderOptions) {
    this.#tokenUrl = opts.tokenUrl;
    this.#credentials = opts.credentials;
    this.#http = opts.http;
    this.#scope = opts.scope;
    this.#clientAuth = opts.clientAuth ?? 'form';
    this.#backoff = { ...DEFAULT_TOKEN_BACKOFF, ...opts.backoff };
    this.#clock = opts.clock ?? Date.now;
    this.#random = opts.random ?? Math.random;
    this.#metrics = opts.metrics;
  }

  /** Configured vault ids (the readiness probe checks each). */
  vaults(): string[] {
    return Object.keys(this.#credentials);
  }

  /**
   * A bearer token for the vault: the cached one while fresh, else a new one from the token endpoint
   * (one request shared by every concurrent caller), unless the vault is backing off after a failure.
   * @throws UpstreamError area `oauth`: code `unknown-vault` (no status, not retryable) when no
   *   credentials are configured for `vault`; the endpoint's error (`invalid_client` with 401,
   *   `invalid_scope` with 400, …) or a transport code otherwise; during a backoff, the last failure.
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
    const failed = this.#failed.get(vault);
    if (failed && this.#clock() < failed.retryAt) return Promise.reject(failed.error);
    const request = this.#fetchToken(vault, credentials)
      .then(
        (token) => {
          this.#failed.delete(vault);
          this.#metrics?.tokenFetches.inc({ vault, outcome: 'success' });
          return token;
        },
        (error: UpstreamError) => {
          const failures = (failed?.failures ?? 0) + 1;
          this.#failed.set(vault, { failures, retryAt: this.#clock() + this.#backoffMs(failures), error });
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

  /** The wait after the `failures`-th failure in a row, ms (see {@link TokenBackoff}). */
  #backoffMs(failures: number): number {
    const ceiling = Math.min(this.#backoff.maxMs, this.#backoff.initialMs * 2 ** Math.min(failures - 1, 30));
    return ceiling / 2 + this.#random() * (ceiling / 2);
  }

  async #fetchToken(vault: string, credentials: VaultCredentials): Promise<string> {
    // The documented request (sandbox contract §8): client_id, client_secret and grant_type as form
    // fields, no scope unless one is configured.
    const form = new URLSearchParams();
    if (this.#clientAuth === 'form') {
      form.set('client_id', credentials.clientId);
      form.set('client_secret', credentials.clientSecret);
    }
    form.set('grant_type', 'client_credentials');
    if (this.#scope) form.set('scope', this.#scope);
    const requestedAt = this.#clock();
    const { data } = await this.#http.request({
      area: 'oauth',
      method: 'POST',
      url: this.#tokenUrl,
      headers: {
        ...(this.#clientAuth === 'basic' ? { authorization: basicAuthorization(credentials) } : {}),
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
