import { hash } from 'node:crypto';
import type { JWTPayload, JWTVerifyOptions } from 'jose';
import { z } from 'zod';
import type { Config } from '../config/index.ts';
import { entryBoundedCache } from '../lib/lru.ts';
import { TOKEN_SCOPES, VAULT_ID_PATTERN, type Viewer } from './viewer.ts';

/** Codes of {@link AuthenticationError}. */
export type AuthenticationErrorCode = 'invalid-token' | 'token-expired';

/**
 * A client presented a token that cannot be accepted: `token-expired` when `exp` has passed (beyond
 * the clock tolerance), `invalid-token` for anything else (not `Bearer`, not a JWT, bad signature,
 * wrong algorithm, issuer or audience, missing or malformed claims). The message says why, never
 * quoting the token.
 */
export class AuthenticationError extends Error {
  override name = 'AuthenticationError';
  readonly code: AuthenticationErrorCode;
  constructor(code: AuthenticationErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Verifies an HTTP `Authorization` header value (or graphql-ws `connectionParams.authorization`).
 * @returns the viewer, or null when no header (undefined or blank) was sent.
 * @throws AuthenticationError for a token that cannot be accepted; any other error (e.g. the JWKS
 *   address cannot be fetched) is the gateway's fault and is thrown unchanged.
 */
export type TokenVerifier = ((authorization: string | undefined) => Promise<Viewer | null>) & {
  /**
   * The answer the verifier has without verifying anything now: null when no header (undefined or
   * blank) was sent, the remembered viewer of a token verified before and not yet past its `exp`;
   * undefined for anything else (a call to the verifier decides). Lets a caller stay synchronous
   * on a client's repeated token (no promise, no microtask per request).
   */
  remembered?(authorization: string | undefined): Viewer | null | undefined;
};

/** Allowed clock skew when checking `exp`, `nbf` and `iat`, in seconds. */
export const CLOCK_TOLERANCE_S = 5;

/** Asymmetric algorithms accepted from a JWKS (`Ed25519` is the fully-specified name of EdDSA). */
const JWKS_ALGORITHMS = ['RS256', 'ES256', 'EdDSA', 'Ed25519'];

/** Longest accepted `Authorization` value, in characters; real tokens are far shorter. */
const MAX_AUTHORIZATION_LENGTH = 16 * 1024;

const claimsSchema = z.object({
  sub: z.string().min(1),
  scope: z.string().optional(),
  vaults: z.array(z.string().regex(VAULT_ID_PATTERN)).min(1),
  exp: z.number().int(),
});

const CLAIM_EXPECTATIONS: Record<string, string> = {
  sub: '"sub" must be a non-empty string',
  scope: '"scope" must be a space-separated string of scope names',
  vaults: '"vaults" must be a non-empty array of 11-character vault ids',
  exp: '"exp" must be an integer',
};

const knownScopes: ReadonlySet<string> = new Set(TOKEN_SCOPES);

/** Verified tokens remembered by {@link createTokenVerifier} (least recently used dropped beyond it). */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

/** jose's module, imported by the first verification (see {@link loadJose}). */
type Jose = typeof import('jose');

let loadingJose: Promise<Jose> | undefined;

/**
 * jose imported on first use rather than at start (a few dozen modules, none needed to listen); the
 * first token verified waits for it once.
 */
function loadJose(): Promise<Jose> {
  loadingJose ??= import('jose');
  return loadingJose;
}

/** Reasons for jose failures that concern the token itself (and not the gateway's key source). */
function tokenFailures({ errors }: Jose): Record<string, string> {
  return {
    [errors.JWSSignatureVerificationFailed.code]: 'signature verification failed',
    [errors.JWSInvalid.code]: 'not a valid JWS',
    [errors.JWTInvalid.code]: 'not a valid JWT',
    [errors.JOSEAlgNotAllowed.code]: 'signing algorithm not allowed',
    [errors.JOSENotSupported.code]: 'signing algorithm or key type not supported',
    [errors.JWKSNoMatchingKey.code]: 'no key of the key set matches the token',
    [errors.JWKSMultipleMatchingKeys.code]: 'several keys of the key set match the token',
  };
}

/**
 * Builds the client token verifier from `Config['auth']`:
 * - `jwtSecret`: HS256 only;
 * - `jwksUrl`: keys fetched (and cached) by jose's remote JWKS, RS256, ES256 or EdDSA;
 * - `issuer`, `audience`: checked when configured.
 * The token must carry `sub`, `exp` and `vaults`; clock tolerance {@link CLOCK_TOLERANCE_S} s. Claims
 * (client token format, gap decisions "Client tokens"):
 * `sub` string; `scope` space-separated upstream scope names (contract §2, unknown names ignored,
 * absent means none); `vaults` non-empty array of vault ids (11 letters or digits); `exp` seconds.
 *
 * A verified token is remembered until its `exp` (keyed by its SHA-256, never the token itself; at
 * most {@link VERIFIED_TOKEN_CACHE_SIZE}, least recently used dropped), so a client sending the same
 * token on every request costs one signature check, not one per request. Failures are never
 * remembered. `now` (ms since the epoch) is for tests.
 * @throws Error when neither `jwtSecret` nor `jwksUrl` is configured.
 */
export function createTokenVerifier(config: Config['auth'], now: () => number = Date.now): TokenVerifier {
  const options: JWTVerifyOptions = {
    clockTolerance: CLOCK_TOLERANCE_S,
    requiredClaims: ['sub', 'exp'],
    ...(config.issuer !== undefined ? { issuer: config.issuer } : {}),
    ...(config.audience !== undefined ? { audience: config.audience } : {}),
  };
  let verify: (token: string) => Promise<JWTPayload>;
  if (config.jwtSecret !== undefined) {
    const key = new TextEncoder().encode(config.jwtSecret);
    const hsOptions = { ...options, algorithms: ['HS256'] };
    verify = async (token) => {
      const { jwtVerify } = await loadJose();
      return (await jwtVerify(token, key, { ...hsOptions, currentDate: new Date(now()) })).payload;
    };
  } else if (config.jwksUrl !== undefined) {
    const jwksUrl = new URL(config.jwksUrl);
    // Built with jose on the first verification; it fetches the key set then (and caches it).
    let keySet: ReturnType<Jose['createRemoteJWKSet']> | undefined;
    const jwksOptions = { ...options, algorithms: JWKS_ALGORITHMS };
    verify = async (token) => {
      const { jwtVerify, createRemoteJWKSet } = await loadJose();
      keySet ??= createRemoteJWKSet(jwksUrl);
      return (await jwtVerify(token, keySet, { ...jwksOptions, currentDate: new Date(now()) })).payload;
    };
  } else {
    throw new Error('auth configuration needs jwtSecret or jwksUrl');
  }

  // Least recently used dropped (lru-cache: a Map dropping its first key walks V8's deleted entries).
  const verified = entryBoundedCache<string, Viewer>(VERIFIED_TOKEN_CACHE_SIZE);

  /** The remembered viewer of `key` (a header's SHA-256) before its `exp`; a stale entry is dropped. */
  const rememberedViewer = (key: string): Viewer | undefined => {
    const cached = verified.get(key);
    // Until `exp` exactly; past it the token goes through jose again (clock tolerance, then expiry).
    if (cached !== undefined && now() < cached.expiresAt) return cached;
    if (cached !== undefined) verified.delete(key);
    return undefined;
  };
  /** The cache key of a header value: one-shot hash, no Hash object per request. */
  const keyOf = (authorization: string) => hash('sha256', authorization, 'base64');

  const remembered = (authorization: string | undefined): Viewer | null | undefined => {
    if (authorization === undefined || authorization.trim() === '') return null;
    if (authorization.length > MAX_AUTHORIZATION_LENGTH) return undefined;
    return rememberedViewer(keyOf(authorization));
  };
  const verifier: TokenVerifier = async (authorization) => {
    const known = remembered(authorization);
    if (known !== undefined) return known;
    // A header `remembered` could not answer: present, and too long or not verified (or expired).
    const header = authorization as string;
    if (header.length > MAX_AUTHORIZATION_LENGTH) {
      throw new AuthenticationError('invalid-token', 'Invalid token: the Authorization header is too long');
    }
    const viewer = await verifyAuthorization(header);
    verified.set(keyOf(header), viewer);
    return viewer;
  };
  verifier.remembered = remembered;
  return verifier;

  async function verifyAuthorization(authorization: string): Promise<Viewer> {
    const match = /^Bearer +([A-Za-z0-9_.~+/-]+=*) *$/i.exec(authorization);
    if (!match) {
      throw new AuthenticationError('invalid-token', 'Invalid token: expected Authorization: Bearer <token>');
    }

    let payload: JWTPayload;
    try {
      payload = await verify(match[1]!);
    } catch (error) {
      throw toAuthenticationError(error, await loadJose());
    }

    const claims = claimsSchema.safeParse(payload);
    if (!claims.success) {
      const first = claims.error.issues[0];
      const claim = String(first?.path[0] ?? '');
      throw new AuthenticationError(
        'invalid-token',
        `Invalid token: ${CLAIM_EXPECTATIONS[claim] ?? 'bad claims'}`,
      );
    }
    const { sub, scope, vaults, exp } = claims.data;
    // Shared by every request presenting this token: frozen so no request can change another's.
    return Object.freeze({
      subject: sub,
      scopes: new Set((scope ?? '').split(' ').filter((name) => knownScopes.has(name))),
      vaults: Object.freeze([...new Set(vaults)]),
      expiresAt: exp * 1000,
    }) as Viewer;
  }
}

/** How a claim failed jose's check (`JWTClaimValidationFailed.reason`); any other reason: a mismatch. */
const CLAIM_PROBLEMS: Record<string, string> = { missing: 'is missing', invalid: 'is malformed' };

/** Reasons of {@link tokenFailures}, built with the first failure. */
let tokenFailureReasons: Record<string, string> | undefined;

function toAuthenticationError(error: unknown, jose: Jose): unknown {
  const { errors } = jose;
  if (error instanceof errors.JWTExpired)
    return new AuthenticationError('token-expired', 'The token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    const problem = CLAIM_PROBLEMS[error.reason] ?? 'does not match';
    return new AuthenticationError('invalid-token', `Invalid token: the "${error.claim}" claim ${problem}`);
  }
  if (error instanceof errors.JOSEError) {
    tokenFailureReasons ??= tokenFailures(jose);
    const reason = tokenFailureReasons[error.code];
    if (reason !== undefined) return new AuthenticationError('invalid-token', `Invalid token: ${reason}`);
  }
  // JWKS unreachable, timed out or unparseable: not the client's fault.
  return error;
}
