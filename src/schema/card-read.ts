import type { ArgBuilder, ObjectRef } from '@pothos/core';
import { InputValidationError } from '@pothos/plugin-validation';
import type { GraphQLContext } from '../context.ts';
import { CardNotFoundError } from '../errors.ts';
import type { InVault, Loaders, VaultCardKey } from '../loaders/index.ts';
import { type BuilderTypes, builder } from './builder.ts';
import { costExtension } from './paging.ts';
import { cardIdSchema, vaultIdArg, vaultOf } from './vault.ts';

/**
 * What the fields naming one card of a vault share (card interface and account updater v1 alike):
 * the `cardId` and `vaultId` arguments, the loader key they make, and the `card`/`accountUpdaterCard`
 * root fields that read one card by them.
 */

/** Arguments of a field naming one card: `cardId` (`CRD…`, validated) and the optional `vaultId`. */
export function cardArgs(t: { arg: ArgBuilder<BuilderTypes> }) {
  return {
    cardId: t.arg.string({ description: 'Card id (`CRD…`).', validate: cardIdSchema }),
    vaultId: t.arg.string(vaultIdArg),
  };
}

/**
 * The loader key of {@link cardArgs}: the vault the operation acts in (see `vaultOf`) and the card id.
 * @throws the errors of `vaultOf` (UnauthenticatedError, VaultNotAllowedError, VaultRequiredError).
 */
export function cardKey(
  context: GraphQLContext,
  args: { cardId: string; vaultId?: string | null },
): VaultCardKey {
  return { vaultId: vaultOf(context, args.vaultId), cardId: args.cardId };
}

/** The card loaders a root card read goes through. */
type CardLoader = 'cardInterfaceCard' | 'accountUpdaterCard';

/**
 * A root query field reading one card by id in the caller's vault through a per-request loader
 * (so through the app-wide card read cache): needs `cards:read`, costs one upstream call, fails with
 * `CardNotFoundError` or `InputValidationError` besides the defaults.
 */
export function cardQueryField<L extends CardLoader>(
  name: string,
  type: ObjectRef<BuilderTypes, Awaited<ReturnType<Loaders[L]['load']>>>,
  loader: L,
  description: string,
): void {
  builder.queryField(name, (t) =>
    t.field({
      type: type as ObjectRef<BuilderTypes, InVault<object>>,
      description,
      authScopes: { scope: 'cards:read' },
      extensions: costExtension({ upstreamCalls: 1 }),
      errors: { types: [CardNotFoundError, InputValidationError] },
      args: cardArgs(t),
      resolve: (_root, args, context) => context.loaders[loader].load(cardKey(context, args)),
    }),
  );
}
