import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin, { resolveNodes } from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ValidationPlugin from '@pothos/plugin-validation';
import type { GraphQLResolveInfo } from 'graphql';
import type { TokenScope } from '../auth/viewer.ts';
import type { GraphQLContext } from '../context.ts';
import {
  ForbiddenError,
  OperationLimitError,
  UnauthenticatedError,
  UpstreamServiceError,
} from '../errors.ts';
import { decodeNodeID, NOTIFICATION_NODE, readNotificationNode } from './notification-node.ts';
import { costExtension } from './paging.ts';

/**
 * The one Pothos builder. Plugin order matters: errors wraps everything so that authorization
 * failures (scope-auth) and input failures (validation) come back as typed results; relay runs
 * before scope-auth so auth functions see parsed global IDs.
 */
export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  /** `scope`: a scope name the client token must grant (upstream, contract §2, or the gateway's own). */
  AuthScopes: { authenticated: boolean; scope: TokenScope };
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: true;
  Scalars: {
    JSON: { Input: unknown; Output: unknown };
    DateTime: { Input: string; Output: string | Date };
    YearMonth: { Input: string; Output: string };
    MaskedPan: { Input: never; Output: string };
    ID: { Input: string; Output: string };
  };
}>({
  plugins: [ErrorsPlugin, RelayPlugin, ScopeAuthPlugin, ValidationPlugin],
  defaultFieldNullability: false,
  defaultInputFieldRequiredness: true,
  errors: {
    // Every field with `errors` can fail authentication, authorization and the upstream call; fields
    // list only their own further types.
    defaultTypes: [UnauthenticatedError, ForbiddenError, UpstreamServiceError],
    unsafelyHandleInputErrors: true,
    defaultResultOptions: { description: 'The field succeeded; its value is in `data`.' },
    defaultUnionOptions: {
      description: 'The value of the field, or one of the typed errors it can fail with.',
    },
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // Notification ids are global IDs as they are (src/schema/notification-node.ts).
    decodeGlobalID: decodeNodeID,
    nodeTypeOptions: { description: 'An object with a Relay global ID, readable with `node(id)`.' },
    idFieldOptions: { description: 'Relay global ID (opaque).' },
    nodeQueryOptions: {
      nullable: true,
      description:
        'Any object by its Relay global ID; null when it does not exist or the caller may not see its vault.',
      args: { id: { description: 'Relay global ID.' } },
      extensions: costExtension({ upstreamCalls: 1 }),
      resolve: (_root, args, context, info) => resolveEachNode([args.id], context, info)[0] as Promise<never>,
    },
    nodesQueryOptions: {
      // Items nullable: an id that cannot be read is a null entry, not an error nulling the list.
      nullable: { list: true, items: true },
      description:
        'Objects by their Relay global IDs, in the same order; null for each one that cannot be read (with an error at its index when the read failed). At most `NODES_MAX_IDS` ids (error code `too-many-ids`).',
      args: { ids: { description: 'Relay global IDs.' } },
      extensions: costExtension({ upstreamCallsPerItem: 1, listSize: { argument: 'ids' } }),
      // One promise per id: a read that fails nulls its own entry (with an error at its path), never
      // the whole list, as Pothos' batched resolution would. Reads still batch through the loaders.
      resolve: (_root, args, context, info) => {
        const max = context.limits.nodesMaxIds;
        if (args.ids.length > max) {
          throw new OperationLimitError(
            `nodes accepts at most ${max} ids, ${args.ids.length} were sent`,
            'too-many-ids',
          );
        }
        return resolveEachNode(args.ids, context, info);
      },
    },
    pageInfoTypeOptions: { description: 'Relay pagination state of a connection.' },
    hasNextPageFieldOptions: { description: 'Whether more items follow the last edge.' },
    hasPreviousPageFieldOptions: { description: 'Whether items precede the first edge.' },
    startCursorFieldOptions: { description: 'Cursor of the first edge.' },
    endCursorFieldOptions: { description: 'Cursor of the last edge; pass it as `after` for the next page.' },
    firstArgOptions: { description: 'Number of items to return.' },
    afterArgOptions: { description: 'Return items after this cursor.' },
    lastArgOptions: { description: 'Not supported: connections page forwards only.' },
    beforeArgOptions: { description: 'Not supported: connections page forwards only.' },
    defaultConnectionTypeOptions: { description: 'A Relay connection: a page of edges and its page info.' },
    defaultEdgeTypeOptions: { description: 'One item of a Relay connection with its cursor.' },
    edgesFieldOptions: { description: 'The items of this page.' },
    pageInfoFieldOptions: { description: 'Pagination state.' },
    cursorFieldOptions: { description: 'Opaque cursor of this item.' },
    nodeFieldOptions: { description: 'The item.' },
  },
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (context) => ({
      authenticated: context.viewer !== null,
      scope: (scope) => context.viewer?.scopes.has(scope) ?? false,
    }),
    unauthorizedError: (_parent, context, _info, result) => authorizationError(context, result),
  },
});

/**
 * The error of a failed scope check, for root fields and entity references (src/schema/entity.ts)
 * alike: UnauthenticatedError without a client token, else ForbiddenError (`forbidden`) with
 * scope-auth's reason.
 */
export function authorizationError(context: GraphQLContext, result: { message: string }): Error {
  return context.viewer === null
    ? new UnauthenticatedError()
    : new ForbiddenError(`Not authorized: ${result.message}`);
}

/**
 * One promise per global ID, each resolved alone (see `nodesQueryOptions.resolve`): a notification
 * id through its kind's reader, any other through Pothos' `resolveNodes`.
 */
function resolveEachNode(
  ids: readonly { id: string; typename: string }[],
  context: GraphQLContext,
  info: GraphQLResolveInfo,
): Promise<unknown>[] {
  return ids.map((id) =>
    id.typename === NOTIFICATION_NODE
      ? readNotificationNode(context, id.id)
      : resolveNodes(builder, context, info, [id]).then(([node]) => node),
  );
}

builder.queryType({ description: 'Entry points for reading cards, events and the caller.' });
builder.mutationType({ description: 'Card enrolment, update subscriptions and on-demand checks.' });
builder.subscriptionType({ description: 'Live card lifecycle events, per tenant.' });

/** The builder's schema types, for helpers that take Pothos field or argument builders. */
export type BuilderTypes =
  typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;
