import { z } from 'zod';
import { httpUrl, optionalString, type SettingsSection } from './fields.ts';

/**
 * Well-known JWT secret used only when `UPSTREAM=embedded` and `AUTH_JWT_SECRET` is unset, so
 * `npm start` and `npm run token` agree on a fresh machine. Remote mode never falls back to it, and
 * `NODE_ENV=production` refuses it (whoever knows it can sign tokens for any vault).
 */
export const EMBEDDED_DEV_JWT_SECRET = 'cardgraph-embedded-development-secret-not-for-production';

/** How client tokens are verified. */
export const authSettings = {
  title: 'Client tokens',
  about:
    'Client tokens: an HS256 secret or a JWKS address, not both. Embedded development mode falls back to a well-known development secret so `npm run token` works out of the box (and GraphiQL opened from this machine gets a development token); production refuses that secret.',
  shape: {
    AUTH_JWT_SECRET: z
      .string()
      .min(32, 'needs at least 32 characters')
      .optional()
      .describe('HS256 secret of client JWTs, at least 32 characters (e.g. openssl rand -hex 32).'),
    AUTH_JWKS_URL: httpUrl.optional().describe('JWKS address of client JWTs (RS256, ES256, EdDSA).'),
    AUTH_ISSUER: optionalString.describe('Required `iss` of client JWTs; any when unset.'),
    AUTH_AUDIENCE: optionalString.describe('Required `aud` of client JWTs; any when unset.'),
  },
} satisfies SettingsSection;

type AuthEnv = z.output<z.ZodObject<typeof authSettings.shape>>;

/** How client tokens are verified (src/auth/verify-token.ts). */
export interface AuthConfig {
  /** HS256 secret for client JWTs; exactly one of jwtSecret and jwksUrl is set. */
  jwtSecret?: string;
  /** JWKS address for client JWTs (RS256/ES256/EdDSA). */
  jwksUrl?: string;
  issuer?: string;
  audience?: string;
}

/** Remote mode needs a way to verify tokens; the secret and the JWKS exclude each other. */
export function refineAuth(env: AuthEnv & { UPSTREAM?: string | undefined }, ctx: z.RefinementCtx): void {
  if (env.UPSTREAM === 'remote' && !env.AUTH_JWT_SECRET && !env.AUTH_JWKS_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_SECRET'],
      message: 'AUTH_JWT_SECRET or AUTH_JWKS_URL is required when UPSTREAM=remote',
    });
  }
  if (env.AUTH_JWT_SECRET && env.AUTH_JWKS_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWKS_URL'],
      message: 'set AUTH_JWT_SECRET or AUTH_JWKS_URL, not both',
    });
  }
}

/** {@link AuthConfig} from the parsed variables: the development secret when neither is set. */
export function authConfig(e: AuthEnv): AuthConfig {
  const jwtSecret = e.AUTH_JWT_SECRET ?? (e.AUTH_JWKS_URL ? undefined : EMBEDDED_DEV_JWT_SECRET);
  return {
    ...(jwtSecret ? { jwtSecret } : {}),
    ...(e.AUTH_JWKS_URL ? { jwksUrl: e.AUTH_JWKS_URL } : {}),
    ...(e.AUTH_ISSUER ? { issuer: e.AUTH_ISSUER } : {}),
    ...(e.AUTH_AUDIENCE ? { audience: e.AUTH_AUDIENCE } : {}),
  };
}
