import { resolveVault, VaultAccessError } from '../auth/viewer.ts';
import type { GraphQLContext } from '../context.ts';
import { cardId, vaultId } from '../contracts/common.ts';
import { UnauthenticatedError, VaultNotAllowedError, VaultRequiredError } from '../errors.ts';
import type { InVault } from '../loaders/index.ts';

/** Vault ids are 11 characters (contract §2: tenant; src/contracts/common.ts). */
export const vaultIdSchema = vaultId;

/** v1 and card interface card ids: `CRD` + 1 to 64 letters or digits (src/contracts/common.ts). */
export const cardIdSchema = cardId;

/** Options of the optional `vaultId` argument every vault-scoped root field takes. */
export const vaultIdArg = {
  required: false,
  description: 'Vault (tenant) to act in; required when the client token names several.',
  validate: vaultIdSchema,
} as const;

/**
 * The vault an operation acts in: the `vaultId` argument when given (it must be in the token), else
 * the token's only vault.
 * @throws UnauthenticatedError without a token; VaultNotAllowedError (`vault-not-allowed`) or
 *   VaultRequiredError (`vault-required`), both GraphQL `ForbiddenError`s.
 */
export function vaultOf(context: GraphQLContext, vaultId: string | null | undefined): string {
  if (!context.viewer) throw new UnauthenticatedError();
  try {
    return resolveVault(context.viewer, vaultId ?? undefined);
  } catch (error) {
    if (error instanceof VaultAccessError) {
      throw error.code === 'vault-not-allowed'
        ? new VaultNotAllowedError(error.message)
        : new VaultRequiredError(error.message);
    }
    throw error;
  }
}

/**
 * Runs `act` in the vault the operation acts in (see {@link vaultOf}) and tags its answer with that
 * vault, so the answer's joins read with the same vault's credentials.
 * @throws the errors of {@link vaultOf}, and whatever `act` rejects with.
 */
export async function inVault<T extends object>(
  context: GraphQLContext,
  vaultId: string | null | undefined,
  act: (vault: string) => Promise<T>,
): Promise<InVault<T>> {
  const vault = vaultOf(context, vaultId);
  return { ...(await act(vault)), vaultId: vault };
}
