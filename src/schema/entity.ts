import type { ObjectRef } from '@pothos/core';
import type { UpstreamScope } from '../auth/viewer.ts';
import type { GraphQLContext } from '../context.ts';
import { authorizationError, type BuilderTypes, builder } from './builder.ts';
import { vaultOf } from './vault.ts';

/**
 * Federation entities (issue 22 item 1): the types a company's other subgraphs may hold a reference
 * to, each registered next to its type (card.ts, account-updater-card.ts, network-token.ts,
 * card-event.ts) with its `@key` and how a reference is read. The standalone schema never sees
 * them; src/schema/subgraph.ts adds the keys and `_entities` to the subgraph build only
 * (`FEDERATION=on`).
 *
 * Vault scoping (docs/gap-decisions.md "Federation: entity keys and vaults"): a key names no vault,
 * so a reference is read in the vault the operation acts in, as a root field without `vaultId`:
 * the client token's only vault (the router forwards the client's `Authorization`); a token naming
 * several vaults gets `vault-required`, as the root fields. A reference the vault does not hold (a
 * card of another vault, or none) is null, never another vault's data.
 */

/** One registered entity: its key field and its reader. */
export interface EntityDefinition {
  /** The `@key(fields:)` selection, e.g. `cardId`. */
  key: string;
  /**
   * Reads one reference (the representation's key fields) with the request's loaders; null when
   * the operation's vault holds nothing under that key.
   * @throws the errors of {@link readReference}.
   */
  resolveReference: (reference: Record<string, unknown>, context: GraphQLContext) => Promise<unknown>;
}

/** The registered entities by type name, in registration order. */
export const entities = new Map<string, EntityDefinition>();

/**
 * Registers `ref` as an entity keyed by the one field `key` (a string field of the type), whose
 * references are read by `resolve.read` after the checks of {@link readReference}.
 */
export function federatedEntity<T, K extends string>(
  ref: ObjectRef<BuilderTypes, T>,
  key: K,
  resolve: {
    /** Scope the client token must grant, the root field's. */
    scope: UpstreamScope;
    /** Whether a key value is well-formed; a malformed one is null without any upstream read. */
    isKey: (value: string) => boolean;
    /** Reads the entity in `vaultId`; null when the vault holds none under the key. */
    read: (context: GraphQLContext, vaultId: string, value: string) => Promise<T | null>;
  },
): void {
  entities.set(ref.name, {
    key,
    resolveReference: (reference, context) =>
      readReference(context, resolve.scope, () => {
        const value = reference[key];
        if (typeof value !== 'string' || !resolve.isKey(value)) return Promise.resolve(null);
        return resolve.read(context, vaultOf(context, undefined), value).then(unfrozen);
      }),
  });
}

/**
 * `value`, or a shallow copy of it when frozen: @apollo/subgraph's `entitiesResolver` defines
 * `__typename` on the entity it returns, which a frozen object (a logged event) refuses.
 */
function unfrozen<T>(value: T): T {
  return value !== null && typeof value === 'object' && Object.isFrozen(value) ? { ...value } : value;
}

/**
 * Runs `read` when the client token grants `scope`, through the same scope check (and per-request
 * cache of scope results) as the root fields.
 * @throws UnauthenticatedError without a token; ForbiddenError (`forbidden`) without the scope;
 *   VaultRequiredError (`vault-required`) for a token naming several vaults; and whatever `read`
 *   rejects with other than a not-found (an upstream failure).
 */
async function readReference<T>(
  context: GraphQLContext,
  scope: UpstreamScope,
  read: () => Promise<T>,
): Promise<T> {
  // The message scope-auth gives a root field (`Not authorized to resolve Query.card`), for this field.
  await builder.runAuthScopes(context, { scope }, () =>
    authorizationError(context, { message: 'Not authorized to resolve Query._entities' }),
  );
  return read();
}
