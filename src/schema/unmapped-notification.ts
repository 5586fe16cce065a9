import { InputValidationError } from '@pothos/plugin-validation';
import type { GraphQLContext } from '../context.ts';
import type { Logged } from '../events/event-log.ts';
import { UNATTRIBUTED_TENANT, type UnmappedNotification } from '../events/unmapped-notification.ts';
import { builder } from './builder.ts';
import { HISTORY_ERRORS } from './event-fields.ts';
import { costExtension, EVENT_PAGE_SIZE, type EventHistoryArgs, eventHistoryPage } from './paging.ts';
import { vaultIdArg, vaultOf } from './vault.ts';

/**
 * Operators' view of the signed notifications the gateway could not map to an event: they were acknowledged (2xx) and stored redacted in the durable log rather than refused.
 *
 * Scope: `operator:read`, a scope of the gateway itself (src/auth/viewer.ts `GATEWAY_SCOPES`),
 * granted only when a token names it: reading what senders posted is an operator's task, not a card
 * client's, so no upstream scope implies it.
 *
 * Tenancy: an operator sees the entries of the vaults of their token. The unattributed entries (no
 * readable vault, or a vault the gateway does not serve) belong to no vault: the webhook endpoint and
 * its signing secrets are the gateway's, so only an operator of the whole gateway sees them, i.e. a
 * token with `operator:read` that names every vault the gateway serves (`UPSTREAM_CREDENTIALS`,
 * `context.servedVaults`). One vault's operator never does: such a body may be another vault's
 * notification with a misspelt `tenant`. Bodies are redacted like every stored notification.
 */

const UnmappedReasonEnum = builder.enumType('UnmappedNotificationReason', {
  description: 'Why a signed notification could not be mapped to an event.',
  values: {
    NOT_AN_OBJECT: { value: 'not-an-object', description: 'The JSON body is not an object.' },
    NO_TENANT: {
      value: 'no-tenant',
      description: 'No vault could be read (`tenant`, else `details.tenant_id`).',
    },
    NO_ID: {
      value: 'no-id',
      description: 'No notification `id` could be read, so redeliveries could not be recognised.',
    },
    NOT_UTF8: {
      value: 'not-utf8',
      description: 'The body is not UTF-8 text; it is kept as bytes (`bodyEncoding` is `BASE64`).',
    },
  } as const,
});

const BodyEncodingEnum = builder.enumType('UnmappedNotificationBodyEncoding', {
  description: 'How the `body` of an unmapped notification is written.',
  values: {
    JSON: { value: 'json', description: 'JSON text, as received once redacted.' },
    BASE64: {
      value: 'base64',
      description:
        'Base64 of the bytes of a body that is not UTF-8 text, redacted where they spell card numbers or security codes.',
    },
  } as const,
});

const UnmappedNotificationRef = builder
  .objectRef<Logged<UnmappedNotification>>('UnmappedNotification')
  .implement({
    description:
      'A signed notification the gateway acknowledged but could not map to an event, kept (redacted) for operators.',
    fields: (t) => ({
      id: t.id({
        description:
          'The notification `id` when it had a readable one, else `body-sha256:` and the SHA-256 of the body with its hex digits written as letters a-p (the same for every redelivery).',
        resolve: (entry) => entry.id,
      }),
      vaultId: t.string({
        nullable: true,
        description:
          'The vault the notification named (also one this gateway does not serve), or null when none could be read.',
        resolve: (entry) =>
          entry.tenant === UNATTRIBUTED_TENANT ? (entry.namedVault ?? null) : entry.tenant,
      }),
      reason: t.field({
        type: UnmappedReasonEnum,
        description: 'Why it could not be mapped.',
        resolve: (entry) => entry.reason,
      }),
      event: t.string({
        nullable: true,
        description: 'The notification `event` when it had a readable one (at most 128 characters).',
        resolve: (entry) => entry.event,
      }),
      receivedAt: t.field({
        type: 'DateTime',
        description: 'When the gateway received it (ISO 8601 UTC).',
        resolve: (entry) => entry.timestamp,
      }),
      body: t.string({
        description:
          'The body as JSON text (base64 of its bytes when it is not UTF-8, see `bodyEncoding`), redacted: card numbers masked to BIN and last four, security codes replaced by `[redacted]`; cut to 16,384 characters, or bytes (see `truncated`).',
        resolve: (entry) => entry.body,
      }),
      bodyEncoding: t.field({
        type: BodyEncodingEnum,
        description: 'How `body` is written: JSON text, or base64 of the bytes of a body that is not UTF-8.',
        resolve: (entry) => entry.bodyEncoding ?? 'json',
      }),
      truncated: t.boolean({
        description: 'True when `body` was cut.',
        resolve: (entry) => entry.truncated,
      }),
      bodyBytes: t.int({
        description: 'Size of the body as received, in bytes.',
        resolve: (entry) => entry.bodyBytes,
      }),
    }),
  });

const UNMAPPED_HISTORY_DESCRIPTION =
  "Signed notifications the gateway acknowledged but could not map to an event, oldest first by receipt, within the event retention period; needs the `operator:read` scope. Without `vaultId`: those of the token's vaults, and, for a token naming every vault this gateway serves, those naming no vault or a vault it does not serve; with `vaultId`: that vault's only. Forward pagination only (`first`, `after`).";

builder.queryField('unmappedNotificationHistory', (t) =>
  t.connection(
    {
      type: UnmappedNotificationRef,
      nullable: true,
      description: `${UNMAPPED_HISTORY_DESCRIPTION} ${HISTORY_ERRORS}`,
      authScopes: { scope: 'operator:read' },
      extensions: costExtension({ listSize: { argument: 'first', ...EVENT_PAGE_SIZE } }),
      args: { vaultId: t.arg.string(vaultIdArg) },
      resolve: (_root, args, context) => unmappedPage(context, args),
    },
    {
      name: 'UnmappedNotificationConnection',
      description: 'A page of unmapped notifications, oldest first, with its pagination state.',
    },
    {
      name: 'UnmappedNotificationEdge',
      description: 'One unmapped notification of a page, with its cursor.',
    },
  ),
);

builder.queryField('unmappedNotifications', (t) =>
  t.connection({
    type: UnmappedNotificationRef,
    description: UNMAPPED_HISTORY_DESCRIPTION,
    deprecationReason:
      'Use `unmappedNotificationHistory`: the same page returned as the connection itself, which Relay, Apollo Client and urql can page; its errors carry their code in `errors[].extensions.code`.',
    authScopes: { scope: 'operator:read' },
    extensions: costExtension({ listSize: { argument: 'first', ...EVENT_PAGE_SIZE } }),
    errors: { types: [InputValidationError] },
    args: { vaultId: t.arg.string(vaultIdArg) },
    resolve: (_root, args, context) => unmappedPage(context, args),
  }),
);

/** One page of the unmapped notifications the caller may read (see {@link tenantsOf}). */
function unmappedPage(context: GraphQLContext, args: EventHistoryArgs & { vaultId?: string | null }) {
  return eventHistoryPage(args, 'unmapped notification', (after, limit) =>
    context.unmappedNotifications.history(tenantsOf(context, args.vaultId), after, limit),
  );
}

/**
 * The tenants an operator may read: `vaultId` (checked against the token), else the token's vaults,
 * and the unattributed entries for an operator of the whole gateway ({@link isWholeGatewayOperator}).
 */
function tenantsOf(context: GraphQLContext, vaultId: string | null | undefined): string[] {
  if (vaultId) return [vaultOf(context, vaultId)];
  const vaults = context.viewer?.vaults ?? [];
  return isWholeGatewayOperator(vaults, context.servedVaults)
    ? [...vaults, UNATTRIBUTED_TENANT]
    : [...vaults];
}

/** True when a token's `vaults` include every vault of `servedVaults` (and it serves at least one). */
export function isWholeGatewayOperator(vaults: readonly string[], servedVaults: readonly string[]): boolean {
  return servedVaults.length > 0 && servedVaults.every((vault) => vaults.includes(vault));
}
