import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { SANDBOX_CREDENTIALS, type VaultCredentials } from '../config/index.ts';
import { TOKEN_LIFETIME_S } from '../contracts/oauth.ts';
import {
  type AuthContext,
  JSON_MEDIA_TYPE,
  type PublicHandler,
  type Router,
  readFormBody,
  SCOPES,
  sendJson,
} from './http.ts';

/**
 * OAuth 2.0 client-credentials token endpoint of the sandbox (contract §2; errors and scope grants in
 * docs/gap-decisions.md, "Scopes per endpoint").
 */

export { TOKEN_LIFETIME_S };

/** Sandbox organization of contract §2 (24 characters). */
export const SANDBOX_ORG_ID = 'ACsandbox000000000000001';

interface IssuedToken {
  vault: string;
  scopes: ReadonlySet<string>;
  /** Unix time in ms after which the token is refused. */
  expiresAt: number;
}

/**
 * In-memory store of opaque bearer tokens → {vault, scopes, expiresAt}.
 * Expired tokens are refused on lookup and purged when new tokens are issued.
 */
export class TokenStore {
  readonly #tokens = new Map<string, IssuedToken>();
  readonly #now: () => number;

  /** @param now clock in ms since the epoch (tests pass a controllable one). */
  constructor(now: () => number) {
    this.#now = now;
  }

  /**
   * Issues a token.
   * @returns the opaque token (43 base64url characters) and its expiry (unix ms).
   */
  issue(vault: string, scopes: readonly string[]): { token: string; expiresAt: number } {
    const now = this.#now();
    for (const [token, issued] of this.#tokens) if (issued.expiresAt <= now) this.#tokens.delete(token);
    const token = randomBytes(32).toString('base64url');
    const expiresAt = now + TOKEN_LIFETIME_S * 1000;
    this.#tokens.set(token, { vault, scopes: new Set(scopes), expiresAt });
    return { token, expiresAt };
  }

  /** The caller of a live token, or `undefined` when unknown or expired. */
  resolve(token: string): AuthContext | undefined {
    const issued = this.#tokens.get(token);
    if (!issued) return undefined;
    if (issued.expiresAt <= this.#now()) {
      this.#tokens.delete(token);
      return undefined;
    }
    return { vault: issued.vault, scopes: issued.scopes };
  }
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function vaultOf(
  clients: Record<string, VaultCredentials>,
  clientId: string,
  clientSecret: string,
): string | undefined {
  let found: string | undefined;
  for (const [vault, credentials] of Object.entries(clients)) {
    // Compare every entry so the answer time does not tell which client ids exist.
    const idMatches = safeEqual(credentials.clientId, clientId);
    const secretMatches = safeEqual(credentials.clientSecret, clientSecret);
    if (idMatches && secretMatches) found = vault;
  }
  return found;
}

/** Client credentials from `Authorization: Basic` (RFC 6749 §2.3.1: form-encoded, then base64). */
function basicCredentials(req: IncomingMessage): { id: string; secret: string } | 'malformed' | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (!match) return 'malformed';
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')),
    };
  } catch {
    return 'malformed';
  }
}

/**
 * Registers `POST /oauth/token` (contract §2).
 * Form fields: `grant_type=client_credentials`, `client_id` and `client_secret` (or HTTP Basic),
 * optional `scope` (space-separated). Answers 200 `{"access_token","token_type":"Bearer",
 * "expires_in":1200,"scope"}`. Errors use the RFC 6749 form `{"error": …}`: 400 `invalid_request`
 * (not a form, missing grant_type, credentials in both places), 400 `unsupported_grant_type`,
 * 400 `invalid_scope` (unknown scope name), 401 `invalid_client` (unknown id or wrong secret).
 * @param clients client credentials per vault; the two sandbox vaults of contract §2 by default.
 */
export function registerOAuthRoutes(
  router: Router,
  tokens: TokenStore,
  clients: Record<string, VaultCredentials> = SANDBOX_CREDENTIALS,
): void {
  const handler: PublicHandler = async ({ req, res }) => {
    const oauthError = (status: number, error: string, description: string, headers = {}): void =>
      sendJson(res, status, { error, error_description: description }, JSON_MEDIA_TYPE, headers);

    const form = await readFormBody(req);
    if (!form) {
      oauthError(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
      return;
    }
    const grantType = form.get('grant_type');
    if (!grantType) {
      oauthError(400, 'invalid_request', 'grant_type is required');
      return;
    }
    if (grantType !== 'client_credentials') {
      oauthError(400, 'unsupported_grant_type', 'only client_credentials is supported');
      return;
    }
    const basic = basicCredentials(req);
    const formId = form.get('client_id');
    const formSecret = form.get('client_secret');
    if (basic === 'malformed') {
      oauthError(401, 'invalid_client', 'malformed Basic credentials', {
        'www-authenticate': 'Basic realm="sandbox"',
      });
      return;
    }
    if (basic && formSecret !== undefined) {
      oauthError(400, 'invalid_request', 'send client credentials either as Basic or in the form, not both');
      return;
    }
    const clientId = basic?.id ?? formId;
    const clientSecret = basic?.secret ?? formSecret;
    const vault =
      clientId !== undefined && clientSecret !== undefined
        ? vaultOf(clients, clientId, clientSecret)
        : undefined;
    if (!vault) {
      oauthError(
        401,
        'invalid_client',
        'client authentication failed',
        basic ? { 'www-authenticate': 'Basic realm="sandbox"' } : {},
      );
      return;
    }
    const requested = (form.get('scope') ?? '').split(' ').filter(Boolean);
    const known = new Set<string>(SCOPES);
    if (requested.some((scope) => !known.has(scope))) {
      oauthError(400, 'invalid_scope', 'unknown scope requested');
      return;
    }
    const granted = requested.length > 0 ? [...new Set(requested)] : [...SCOPES];
    const { token } = tokens.issue(vault, granted);
    sendJson(
      res,
      200,
      { access_token: token, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_S, scope: granted.join(' ') },
      JSON_MEDIA_TYPE,
      { pragma: 'no-cache' },
    );
  };
  router.addPublic('POST', '/oauth/token', handler);
}
