import { z } from 'zod';
import { resolveVault, VaultAccessError } from '../auth/viewer.ts';
import type { GraphQLContext } from '../context.ts';
import { UnauthenticatedError, VaultNotAllowedError, VaultRequiredError } from '../errors.ts';

/** Vault ids are 11 characters (contract §2: tenant). */
export const vaultIdSchema = z.string().regex(/^[A-Za-z0-9]{11}$/, 'must be an 11-character vault id');

/** v1 and card interface card ids: `CRD` + Base62 (spec "Limits"; gap decisions: 25 characters). */
export const cardIdSchema = z.string().regex(/^CRD[A-Za-z0-9]{1,61}$/, 'must be a card id (CRD…)');

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
