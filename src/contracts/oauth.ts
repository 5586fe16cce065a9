import { z } from 'zod';

/**
 * The OAuth 2.0 token endpoint (sandbox contract §2; docs/gap-decisions.md "Scopes per endpoint")
 * written once: scopes, token lifetime, the token answer and the RFC 6749 error body. Imported by the
 * access token provider (src/upstream/oauth), the sandbox (src/sandbox/oauth.ts) and the client token
 * model (src/auth/viewer.ts).
 */

/** The six scopes of contract §2. */
export const SCOPES = [
  'cards:read',
  'cards:write',
  'network-tokens:read',
  'network-tokens:write',
  'card-attributes:basic',
  'organization-users:read',
] as const;

/** Access token lifetime fixed by contract §2: 1200 s (20 minutes). */
export const TOKEN_LIFETIME_S = 1200;

/**
 * Token endpoint answer: `{"access_token","token_type":"Bearer","expires_in":1200,"scope"}`,
 * `expires_in` in seconds; `token_type` compared case-insensitively (RFC 6749 §5.1).
 */
export const tokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string().regex(/^bearer$/i),
  expires_in: z.number().positive(),
  scope: z.string().optional(),
});

/**
 * Token request, `application/x-www-form-urlencoded` (contract §2): `grant_type=client_credentials`,
 * client id and secret in the form unless sent as HTTP Basic, optional space-separated `scope` (all
 * six when absent).
 */
export const tokenRequest = z.object({
  grant_type: z.literal('client_credentials'),
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
  scope: z.string().optional(),
});

/** Error codes of the token endpoint (RFC 6749 §5.2). */
export const OAUTH_ERRORS = [
  'invalid_request',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_client',
] as const;

/** RFC 6749 §5.2 error body of the token endpoint. */
export const oauthError = z.object({ error: z.enum(OAUTH_ERRORS), error_description: z.string().optional() });
