import { SCOPES } from '../contracts/oauth.ts';

/**
 * Upstream scope names (contract §2). A client token grants a subset of them; the gateway checks the
 * scope an upstream endpoint needs (gap decisions, "Scopes per endpoint") before calling it.
 */
export const UPSTREAM_SCOPES = SCOPES;

/** One of {@link UPSTREAM_SCOPES}. */
export type UpstreamScope = (typeof UPSTREAM_SCOPES)[number];

/**
 * Scopes of the gateway itself, never sent upstream: `operator:read` lets an operator list the
 * signed notifications the gateway could not map (`Query.unmappedNotifications`, issue 19 item 3).
 * They are granted only when asked for by name (a dev token's default is the upstream scopes).
 */
export const GATEWAY_SCOPES = ['operator:read'] as const;

/** One of {@link GATEWAY_SCOPES}. */
export type GatewayScope = (typeof GATEWAY_SCOPES)[number];

/** Every scope a client token's `scope` claim may grant: the upstream ones and the gateway's own. */
export const TOKEN_SCOPES: readonly (UpstreamScope | GatewayScope)[] = [
  ...UPSTREAM_SCOPES,
  ...GATEWAY_SCOPES,
];

/** One of {@link TOKEN_SCOPES}. */
export type TokenScope = UpstreamScope | GatewayScope;

/** A vault (tenant) id: 11 letters or digits (contract §2). */
export { VAULT_ID_PATTERN } from '../contracts/common.ts';

/**
 * The authenticated client of one GraphQL operation, from a verified JWT (see verify-token.ts).
 * - `subject`: the `sub` claim.
 * - `scopes`: the upstream scope names of the `scope` claim (others are dropped).
 * - `vaults`: vault ids the client may act in, at least one, no repeats, in token order.
 * - `expiresAt`: the `exp` claim in ms since the epoch.
 */
export interface Viewer {
  subject: string;
  scopes: ReadonlySet<string>;
  vaults: readonly string[];
  expiresAt: number;
}

/** Codes of {@link VaultAccessError}. */
export type VaultAccessErrorCode = 'vault-not-allowed' | 'vault-required';

/**
 * The operation cannot be given a vault: `vault-not-allowed` when the requested vault is not in the
 * token, `vault-required` when the token names several vaults and none was requested.
 */
export class VaultAccessError extends Error {
  override name = 'VaultAccessError';
  readonly code: VaultAccessErrorCode;
  constructor(code: VaultAccessErrorCode) {
    super(
      code === 'vault-not-allowed'
        ? 'The requested vault is not granted by the client token'
        : 'The client token grants several vaults: name the vault to use',
    );
    this.code = code;
  }
}

/**
 * The vault an operation acts in.
 * @param requested the vault named by the client, if any.
 * @returns `requested` when the token grants it; else the token's only vault.
 * @throws VaultAccessError `vault-not-allowed` or `vault-required`.
 */
export function resolveVault(viewer: Viewer, requested?: string): string {
  if (requested !== undefined) {
    if (!viewer.vaults.includes(requested)) throw new VaultAccessError('vault-not-allowed');
    return requested;
  }
  const [only, ...others] = viewer.vaults;
  if (only === undefined || others.length > 0) throw new VaultAccessError('vault-required');
  return only;
}
