import { z } from 'zod';
import { type authSettings, EMBEDDED_DEV_JWT_SECRET } from './auth.ts';
import type { SettingsSection } from './fields.ts';
import { proxyAddresses, type proxySettings } from './proxy.ts';
import { SANDBOX_CREDENTIALS, type upstreamSettings } from './upstream.ts';

/**
 * `NODE_ENV`, trimmed and lower-cased (`Production`, ` production` are production): `production`,
 * `development` or `test` (both development), unset or blank for development. Anything else (`prod`,
 * `staging`) is refused, so a misspelt production never runs with development defaults (GraphiQL,
 * introspection, suggestions on).
 */
const nodeEnvironment = z
  .string()
  .optional()
  .transform((v) => v?.trim().toLowerCase() || undefined)
  .pipe(
    z
      .enum(['production', 'development', 'test'], {
        error: (issue) =>
          `unknown environment ${JSON.stringify(String(issue.input).slice(0, 40))}: expected production, development or test`,
      })
      .optional(),
  );

/** The production policy's switch. */
export const productionSettings = {
  title: 'Environment',
  about: '',
  shape: {
    NODE_ENV: nodeEnvironment.describe(
      'production: UPSTREAM must be set explicitly; the development JWT secret, an AUTH_JWT_SECRET with fewer than 10 distinct characters and the sandbox client credentials are refused at start; http:// is refused for AUTH_JWKS_URL, the upstream and token addresses and the outbound proxy (a loopback host, localhost, 127.0.0.0/8 or [::1], excepted); GraphiQL, introspection and field suggestions are off unless turned on. Read trimmed and without case; development, test or unset are development, anything else (prod, staging) is refused at start. The Docker image sets production.',
    ),
  },
} satisfies SettingsSection;

/**
 * Host names that never leave the machine: `localhost`, 127.0.0.0/8 and `[::1]`. Only they may be
 * reached over plain `http://` when `NODE_ENV=production` (tests and sidecars on the same host).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * Variables holding addresses that carry secrets or trust: JWKS signing keys, upstream areas (PANs,
 * bearer tokens), the token endpoint (client secrets). `NODE_ENV=production` refuses `http://` for
 * them unless the host is loopback.
 */
const HTTPS_IN_PRODUCTION = [
  'AUTH_JWKS_URL',
  'CARD_INTERFACE_URL',
  'ACCOUNT_UPDATER_URL',
  'CARD_ATTRIBUTES_URL',
  'ACCOUNTS_URL',
  'TOKEN_URL',
] as const;

/**
 * Fewest distinct characters an `AUTH_JWT_SECRET` needs when `NODE_ENV=production` (32 identical
 * characters are 32 characters long and worthless); a random 32-character hex secret has fewer than 10
 * with probability below 1e-4.
 */
export const JWT_SECRET_MIN_DISTINCT_CHARACTERS = 10;

/** The variables the production policy looks at. */
type PolicyEnv = z.output<z.ZodObject<typeof upstreamSettings.shape>> &
  z.output<z.ZodObject<typeof authSettings.shape>> &
  z.output<z.ZodObject<typeof proxySettings.shape>>;

const plainHttpOffLoopback = (address: string) =>
  new URL(address).protocol === 'http:' && !isLoopbackHost(new URL(address).hostname);

/**
 * `NODE_ENV=production`: an image started without `UPSTREAM` would otherwise run the embedded sandbox
 * with the well-known development secret, so anyone could sign tokens for every vault. Refuses that,
 * the development secret itself, a JWT secret with too few distinct characters, `http://` for the
 * JWKS, upstream, token and proxy addresses (loopback excepted) and the sandbox client credentials of
 * contract §2.
 */
export function refuseDevelopmentDefaults(env: PolicyEnv, ctx: z.RefinementCtx): void {
  if (env.UPSTREAM === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTREAM'],
      message: 'required when NODE_ENV=production (remote, or embedded for a sandbox-only deployment)',
    });
  }
  if (env.AUTH_JWT_SECRET === EMBEDDED_DEV_JWT_SECRET) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_SECRET'],
      message: 'the development secret is refused when NODE_ENV=production',
    });
  } else if (env.UPSTREAM !== 'remote' && !env.AUTH_JWT_SECRET && !env.AUTH_JWKS_URL) {
    // Remote mode names it in refineAuth (src/config/auth.ts); unset UPSTREAM is refused above as well.
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_SECRET'],
      message:
        'AUTH_JWT_SECRET or AUTH_JWKS_URL is required when NODE_ENV=production (the development secret is refused)',
    });
  }
  for (const key of HTTPS_IN_PRODUCTION) {
    const value = env[key];
    if (value !== undefined && plainHttpOffLoopback(value)) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message:
          'http:// is refused when NODE_ENV=production (use https://; only a loopback host, localhost, 127.0.0.0/8 or [::1], may use http://)',
      });
    }
  }
  // The proxy's user and password travel in the tunnel request (sandbox contract §8: an https:// proxy).
  if (proxyAddresses(env).some(plainHttpOffLoopback)) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTREAM_PROXY'],
      message:
        'http:// is refused when NODE_ENV=production (the proxy credentials would travel in clear; use https://)',
    });
  }
  if (
    env.AUTH_JWT_SECRET !== undefined &&
    new Set(env.AUTH_JWT_SECRET).size < JWT_SECRET_MIN_DISTINCT_CHARACTERS
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWT_SECRET'],
      message: `too weak for NODE_ENV=production: needs at least ${JWT_SECRET_MIN_DISTINCT_CHARACTERS} distinct characters (use a random secret, e.g. openssl rand -hex 32)`,
    });
  }
  const sandboxIds = new Set(Object.values(SANDBOX_CREDENTIALS).map((c) => c.clientId));
  const sandboxSecrets = new Set(Object.values(SANDBOX_CREDENTIALS).map((c) => c.clientSecret));
  const credentials = Object.values(env.UPSTREAM_CREDENTIALS ?? {});
  if (credentials.some((c) => sandboxIds.has(c.clientId) || sandboxSecrets.has(c.clientSecret))) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTREAM_CREDENTIALS'],
      message: 'the sandbox client credentials (sandbox contract §2) are refused when NODE_ENV=production',
    });
  }
}
