import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ValidationPlugin from '@pothos/plugin-validation';
import type { UpstreamScope } from '../auth/viewer.ts';
import type { GraphQLContext } from '../context.ts';
import { ForbiddenError, UnauthenticatedError } from '../errors.ts';

/**
 * The one Pothos builder. Plugin order matters: errors wraps everything so that authorization
 * failures (scope-auth) and input failures (validation) come back as typed results; relay runs
 * before scope-auth so auth functions see parsed global IDs.
 */
export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  /** `scope`: an upstream scope name (contract §2) the client token must grant. */
  AuthScopes: { authenticated: boolean; scope: UpstreamScope };
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: true;
  Scalars: {
    JSON: { Input: unknown; Output: unknown };
    ID: { Input: string; Output: string };
  };
}>({
  plugins: [ErrorsPlugin, RelayPlugin, ScopeAuthPlugin, ValidationPlugin],
  defaultFieldNullability: false,
  defaultInputFieldRequiredness: true,
  errors: {
    unsafelyHandleInputErrors: true,
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodeQueryOptions: { nullable: true },
    nodesQueryOptions: { nullable: true },
  },
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (context) => ({
      authenticated: context.viewer !== null,
      scope: (scope) => context.viewer?.scopes.has(scope) ?? false,
    }),
    unauthorizedError: (_parent, context, _info, result) =>
      context.viewer === null
        ? new UnauthenticatedError()
        : new ForbiddenError(`Not authorized: ${result.message}`),
  },
});

builder.queryType({ description: 'Entry points for reading cards, events and the caller.' });
builder.mutationType({ description: 'Card enrolment, update subscriptions and on-demand checks.' });
builder.subscriptionType({ description: 'Live card lifecycle events, per tenant.' });
