import { TOKEN_SCOPES, VAULT_ID_PATTERN } from './viewer.ts';

/**
 * Options of {@link issueDevToken}.
 * - `secret`: the gateway's HS256 secret (`AUTH_JWT_SECRET`, or EMBEDDED_DEV_JWT_SECRET in embedded mode).
 * - `subject`: the `sub` claim.
 * - `vaults`: vault ids (11 letters or digits), at least one.
 * - `scopes`: scope names: upstream ones (contract §2) or the gateway's own (`operator:read`).
 * - `expiresInS`: lifetime in seconds (a positive integer).
 * - `issuer`, `audience`: set `iss`/`aud` when the gateway checks them.
 */
export interface DevTokenOptions {
  secret: string;
  subject: string;
  vaults: readonly string[];
  scopes: readonly string[];
  expiresInS: number;
  issuer?: string;
  audience?: string;
}

/**
 * Signs a client token (HS256 JWT) that the gateway's HS256 verifier accepts, for development and
 * tests. Claims: `sub`, `scope` (space-separated), `vaults`, `iat`, `exp`, and `iss`/`aud` when given.
 * @returns the compact JWT.
 * @throws RangeError for an empty subject, no vault, a malformed vault id, an unknown scope name or a
 *   non-positive lifetime.
 */
export async function issueDevToken(options: DevTokenOptions): Promise<string> {
  const { secret, subject, vaults, scopes, expiresInS } = options;
  if (subject === '') throw new RangeError('subject must not be empty');
  if (vaults.length === 0) throw new RangeError('at least one vault is required');
  for (const vault of vaults) {
    if (!VAULT_ID_PATTERN.test(vault))
      throw new RangeError(`vault id "${vault}" is not 11 letters or digits`);
  }
  const known: readonly string[] = TOKEN_SCOPES;
  for (const scope of scopes) {
    if (!known.includes(scope)) {
      throw new RangeError(`unknown scope "${scope}"; known scopes: ${TOKEN_SCOPES.join(' ')}`);
    }
  }
  if (!Number.isInteger(expiresInS) || expiresInS < 1)
    throw new RangeError('expiresInS must be a positive integer');

  // Imported here, not at start: the production gateway verifies tokens and never signs one.
  const { SignJWT } = await import('jose');
  const nowS = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({ scope: [...new Set(scopes)].join(' '), vaults: [...new Set(vaults)] })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(subject)
    .setIssuedAt(nowS)
    .setExpirationTime(nowS + expiresInS);
  if (options.issuer !== undefined) jwt = jwt.setIssuer(options.issuer);
  if (options.audience !== undefined) jwt = jwt.setAudience(options.audience);
  return jwt.sign(new TextEncoder().encode(secret));
}
