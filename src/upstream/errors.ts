import { redactPans } from '../lib/pan.ts';

/**
 * The upstream areas of the interface specification (its area table), plus the OAuth 2.0 token
 * endpoint of sandbox contract §2. Every upstream failure names the area it came from.
 */
export type UpstreamArea =
  | 'card-interface'
  | 'account-updater'
  | 'network-tokens'
  | 'card-attributes'
  | 'accounts'
  | 'oauth';

/**
 * Codes an {@link UpstreamError} carries when the upstream sent no error code of its own:
 * - `upstream-timeout`: the call (headers and whole body, retries included) did not complete within
 *   its total deadline (`UPSTREAM_TIMEOUT_MS`); retryable;
 * - `connection-failed`: connect refused, reset, DNS failure, socket closed mid-exchange;
 * - `invalid-response`: a body that is not JSON, fails the zod schema, is too large, or a status the
 *   operation does not define as success;
 * - `unknown-vault`: no client credentials are configured for the requested vault;
 * - `client-closed`: the HTTP client was closed (shutdown) before the request completed;
 * - `upstream-budget-exceeded`: the operation already made as many upstream calls as its budget
 *   allows (`UPSTREAM_CALL_BUDGET`); nothing was sent; not retryable as is;
 * - `request-failed`: any other transport failure;
 * - through the vault's outbound forward proxy (`UPSTREAM_PROXY`, sandbox contract §8; `proxy` names
 *   it by host and port): `proxy-authentication-failed` (the proxy answered 407: wrong proxy
 *   credentials; not retryable), `proxy-refused` (the proxy answered the tunnel request with another
 *   non-200 status; retryable when 5xx), `proxy-certificate-untrusted` (the proxy's certificate or
 *   the upstream certificate it presents in the intercepted TLS is not signed by a trusted CA, e.g.
 *   `UPSTREAM_CA_FILE` missing or wrong; not retryable), and `connection-failed` /
 *   `upstream-timeout` as above when the proxy cannot be reached;
 * - for an error response without a readable contract §3 body, a code derived from the status
 *   (`bad-request`, `unauthorized`, `forbidden`, `not-found`, `conflict`, `unprocessable`,
 *   `rate-limited`, `server-error`, `bad-gateway`, `service-unavailable`, `gateway-timeout`,
 *   otherwise `http-<status>`).
 */
export type UpstreamTransportCode =
  | 'upstream-timeout'
  | 'connection-failed'
  | 'invalid-response'
  | 'unknown-vault'
  | 'client-closed'
  | 'upstream-budget-exceeded'
  | 'request-failed'
  | 'proxy-authentication-failed'
  | 'proxy-refused'
  | 'proxy-certificate-untrusted';

/** HTTP statuses after which the same request may succeed when sent again later. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Construction fields of {@link UpstreamError}; `retryable` defaults from status and code. */
export interface UpstreamErrorInit {
  area: UpstreamArea;
  code: string;
  status?: number;
  retryable?: boolean;
  pointer?: string;
  detail?: string;
  /** HTTP method and path (ids allowed, never a PAN) for the message; omitted when unknown. */
  operation?: string;
  /** `host:port` of the outbound forward proxy the call went through (never its credentials). */
  proxy?: string;
  cause?: unknown;
}

/**
 * The one error class of the upstream clients: every failed call (transport failure, error status,
 * unparseable response, unknown vault) surfaces as this, so the gateway maps failures in one place.
 *
 * - `area`: which upstream answered (or failed to answer).
 * - `status`: the HTTP status; undefined when no response arrived (timeout, connection failure) or no
 *   request was sent (unknown vault).
 * - `code`: the upstream error code of the contract §3 body (`card-not-found`,
 *   `account-updater-not-supported`, `invalid_client` from the token endpoint, …) or one of
 *   {@link UpstreamTransportCode}.
 * - `retryable`: true for timeouts, connection failures and statuses 429, 500, 502, 503, 504.
 * - `pointer`: `source.pointer` of a 400 answer (JSON pointer of the bad member, docs/gap-decisions.md
 *   "Common").
 * - `detail`: the upstream `detail` text, passed through `redactPans` (contract §3 promises no PAN;
 *   this is the second line of defence).
 * - `proxy`: `host:port` of the outbound forward proxy the call went through, when it did (sandbox
 *   contract §8); never the proxy's credentials.
 *
 * The message is built from these fields only and is PAN-free.
 */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly area: UpstreamArea;
  readonly status?: number;
  readonly code: string;
  readonly retryable: boolean;
  readonly pointer?: string;
  readonly detail?: string;
  readonly proxy?: string;

  constructor(init: UpstreamErrorInit) {
    const detail = init.detail === undefined ? undefined : redactPans(init.detail);
    const pointer = init.pointer === undefined ? undefined : redactPans(init.pointer);
    const where = init.operation ? ` ${init.operation}` : '';
    const status = init.status === undefined ? '' : ` ${init.status}`;
    const via = init.proxy ? ` via proxy ${init.proxy}` : '';
    const message = redactPans(
      `upstream ${init.area}${where} failed:${status} ${init.code}${detail ? ` (${detail})` : ''}${via}`,
    );
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.area = init.area;
    this.code = init.code;
    if (init.status !== undefined) this.status = init.status;
    this.retryable =
      init.retryable ??
      (init.status === undefined
        ? init.code === 'upstream-timeout' || init.code === 'connection-failed'
        : RETRYABLE_STATUSES.has(init.status));
    if (pointer !== undefined) this.pointer = pointer;
    if (detail !== undefined) this.detail = detail;
    if (init.proxy !== undefined) this.proxy = init.proxy;
  }

  /**
   * The id the failed call was about (card id, PAN alias, organization id), as the area client that
   * made the call names it ({@link UpstreamError.about}); a not-found error names it.
   */
  subject?: string;
  /** Whether the failed call sent the client's input, so a refused member is an input error. */
  sentInput = false;

  /**
   * Records what the failed call was about; the area client that made it calls this once
   * (src/upstream/authorized-request.ts `AreaClient.send`), facts the error already has are kept.
   * @returns this error.
   */
  about(call: { subject?: string | undefined; sentInput?: boolean | undefined }): this {
    if (this.subject === undefined && call.subject !== undefined) this.subject = call.subject;
    if (call.sentInput) this.sentInput = true;
    return this;
  }
}

/**
 * A caller error detected before any network call (e.g. a card id that does not match
 * `^CRD[A-Za-z0-9]*$`, the v1 pattern `^CRD.*$` narrowed to the Base62 ids of docs/gap-decisions.md
 * "Identifiers"). The gateway maps it to a not-found or an input error. `argument` names the
 * parameter; the message never repeats the rejected value.
 */
export class InvalidArgumentError extends Error {
  override name = 'InvalidArgumentError';
  readonly argument: string;
  /** The refused value when it is the id the call is about (a malformed card id is a missing card). */
  readonly subject?: string;

  constructor(argument: string, reason: string, subject?: string) {
    super(`invalid ${argument}: ${reason}`);
    this.argument = argument;
    if (subject !== undefined) this.subject = subject;
  }
}
