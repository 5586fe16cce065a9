import { cursorToOffset, resolveOffsetConnection } from '@pothos/plugin-relay';
import { InputValidationError } from '@pothos/plugin-validation';
import { z } from 'zod';
import type { GraphQLContext } from '../context.ts';
import { ORGANIZATION_ID_PATTERN } from '../contracts/accounts.ts';
import { OrganizationNotFoundError } from '../errors.ts';
import type { Loaders, OrganizationPageKey, VaultSummary } from '../loaders/index.ts';
import type { MemberVault, OrganizationInvite, OrganizationMember, Page } from '../upstream/index.ts';
import { builder } from './builder.ts';
import { costExtension, ORGANIZATION_PAGE_SIZE } from './paging.ts';
import { vaultIdArg, vaultOf } from './vault.ts';

/**
 * Organization members and pending invitations (spec "Organization member (user)",
 * GET /organizations/{organizationId}/members and /invites), as Relay connections over the
 * upstream's JSON:API pages.
 */

/** Pothos offset-connection sizes from the shared constants, so the cost plugin multiplies by what is served. */
const ORGANIZATION_CONNECTION_SIZE = {
  defaultSize: ORGANIZATION_PAGE_SIZE.default,
  maxSize: ORGANIZATION_PAGE_SIZE.max,
};

/** Upstream page size used for every read, so members pages are shared by all connections of a request. */
const UPSTREAM_PAGE_SIZE = 100;

interface OrganizationParent {
  id: string;
  vaultId: string;
}

const VaultType = builder.objectRef<VaultSummary>('Vault').implement({
  description: 'A vault (tenant) of the organization.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Vault id.' }),
    name: t.exposeString('name', { description: 'Vault name.' }),
    environment: t.exposeString('envIdentifier', { description: 'Environment identifier, e.g. `LIVE`.' }),
  }),
});

const VaultMembershipType = builder.objectRef<MemberVault>('VaultMembership').implement({
  description: "A member's access to one vault.",
  fields: (t) => ({
    role: t.exposeString('role', { description: 'Role in the vault.' }),
    vault: t.field({
      type: VaultType,
      description: 'The vault (one object per vault id per request).',
      resolve: (membership, _args, context) => context.loaders.vault.load(membership.id),
    }),
  }),
});

/** Primes the per-request vault loader from memberships read with a page, so `vault` costs nothing. */
function primeVaults(context: GraphQLContext, memberships: readonly MemberVault[]): void {
  for (const membership of memberships) {
    context.loaders.vault.prime(membership.id, {
      id: membership.id,
      name: membership.name,
      envIdentifier: membership.envIdentifier,
    });
  }
}

const MemberType = builder.objectRef<OrganizationMember>('OrganizationMember').implement({
  description: 'A user linked to the organization.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'User id.' }),
    name: t.exposeString('name', { description: 'Full name.' }),
    emailAddress: t.exposeString('emailAddress', { description: 'Email address.' }),
    role: t.exposeString('role', { description: 'Organization role.' }),
    permissions: t.exposeStringList('permissions', {
      description: 'Permissions, e.g. `read`, `write`, `admin`.',
    }),
    ssoId: t.exposeString('ssoId', { nullable: true, description: 'Single sign-on identity.' }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When the user joined, ISO 8601 with milliseconds.',
    }),
    vaults: t.field({
      type: [VaultMembershipType],
      description: 'Vaults the user can access, with the role in each.',
      resolve: (member) => member.vaults,
    }),
  }),
});

const InviteType = builder.objectRef<OrganizationInvite>('OrganizationInvite').implement({
  description: 'A pending invitation to the organization.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Invitation id.' }),
    emailAddress: t.exposeString('emailAddress', { description: 'Invited email address.' }),
    role: t.exposeString('role', { description: 'Role offered.' }),
    state: t.exposeString('state', { description: 'Invitation state, e.g. `pending`.' }),
    invitedBy: t.exposeString('invitedBy', { description: 'Who sent the invitation.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was sent, ISO 8601.' }),
    vaults: t.field({
      type: [VaultMembershipType],
      description: 'Vaults offered, with the role in each.',
      resolve: (invite) => invite.vaults,
    }),
  }),
});

/**
 * Items `offset` to `offset + limit` of a paged upstream list, reading the pages that cover them
 * through a per-request loader.
 */
async function slice<T>(
  load: (key: OrganizationPageKey) => Promise<Page<T>>,
  parent: OrganizationParent,
  offset: number,
  limit: number,
): Promise<T[]> {
  const first = Math.floor(offset / UPSTREAM_PAGE_SIZE) + 1;
  const last = Math.floor((offset + limit - 1) / UPSTREAM_PAGE_SIZE) + 1;
  const pageKey = (pageNumber: number): OrganizationPageKey => ({
    vaultId: parent.vaultId,
    organizationId: parent.id,
    pageNumber,
    pageSize: UPSTREAM_PAGE_SIZE,
  });
  if (first > 1) {
    // An upstream that answers without paging (the documented `{"data":[…]}`) gave the whole list
    // with page 1 (read already by `organization` for members): asking it for page 2 would repeat it.
    const head = await load(pageKey(1));
    if (head.whole) return head.items.slice(offset, offset + limit);
  }
  const pages = await Promise.all(
    Array.from({ length: last - first + 1 }, (_, i) => load(pageKey(first + i))),
  );
  if (pages[0]?.whole) return pages[0].items.slice(offset, offset + limit);
  const items = pages.flatMap((page) => page.items);
  const start = offset - (first - 1) * UPSTREAM_PAGE_SIZE;
  return items.slice(start, start + limit);
}

/** Relay paging arguments of the organization connections. */
interface PagingArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** Whether `cursor` is an offset cursor these connections hand out (a non-negative position). */
function isOffsetCursor(cursor: string): boolean {
  try {
    const offset = cursorToOffset(cursor);
    return Number.isSafeInteger(offset) && offset >= 0;
  } catch {
    return false;
  }
}

/**
 * Checks the paging arguments before any upstream read, like `cardEvents`: forward pagination only,
 * `first` not negative, `after` a cursor of these connections.
 * @throws InputValidationError (`invalid-input`) naming every bad argument; Pothos would otherwise
 *   fail with an untyped error such as "Invalid base64 string".
 */
function assertForwardPaging(args: PagingArgs): void {
  const issues: { message: string; path: string[] }[] = [];
  for (const name of ['last', 'before'] as const) {
    if (args[name] != null)
      issues.push({ message: 'only forward pagination (first, after) is supported', path: [name] });
  }
  if (args.first != null && args.first < 0) issues.push({ message: 'must not be negative', path: ['first'] });
  if (args.after != null && !isOffsetCursor(args.after))
    issues.push({ message: 'is not a cursor of this connection', path: ['after'] });
  if (issues.length > 0) throw new InputValidationError({ issues });
}

/**
 * Options shared by the organization's offset connections (`members`, `invites`): nullable, one
 * upstream call per page, page size from {@link ORGANIZATION_PAGE_SIZE}, and a resolver that checks
 * the paging arguments, reads the upstream pages covering the requested slice through the loader
 * `loaderOf` picks and primes the vault loader from the memberships it read.
 */
function organizationConnection<T extends { vaults: readonly MemberVault[] }>(
  loaderOf: (loaders: Loaders) => { load(key: OrganizationPageKey): Promise<Page<T>> },
) {
  return {
    nullable: true,
    extensions: costExtension({
      upstreamCalls: 1,
      listSize: { argument: 'first', ...ORGANIZATION_PAGE_SIZE },
    }),
    resolve: (organization: OrganizationParent, args: PagingArgs, context: GraphQLContext) => {
      assertForwardPaging(args);
      return resolveOffsetConnection({ args, ...ORGANIZATION_CONNECTION_SIZE }, async ({ offset, limit }) => {
        const loader = loaderOf(context.loaders);
        const items = await slice((key) => loader.load(key), organization, offset, limit);
        primeVaults(
          context,
          items.flatMap((item) => item.vaults),
        );
        return items;
      });
    },
  } as const;
}

const OrganizationType = builder.objectRef<OrganizationParent>('Organization').implement({
  description: 'An organization of the provider: its members and pending invitations.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Organization id (24 characters).' }),
    members: t.connection({
      type: MemberType,
      description: 'Users of the organization, pending invitations excluded.',
      deprecationReason:
        'Use `Query.organizationMembers`: the same page at a root field, which Relay can refetch to page (an organization has no global ID); its errors carry their code in `errors[].extensions.code`.',
      ...organizationConnection((loaders) => loaders.organizationMembers),
    }),
    invites: t.connection({
      type: InviteType,
      description: 'Pending invitations.',
      deprecationReason:
        'Use `Query.organizationInvites`: the same page at a root field, which Relay can refetch to page (an organization has no global ID); its errors carry their code in `errors[].extensions.code`.',
      ...organizationConnection((loaders) => loaders.organizationInvites),
    }),
  }),
});

builder.queryField('organization', (t) =>
  t.field({
    type: OrganizationType,
    description:
      "An organization by id, read with the caller's vault credentials (needs `organization-users:read`).",
    authScopes: { scope: 'organization-users:read' },
    extensions: costExtension({ upstreamCalls: 1 }),
    errors: { types: [InputValidationError, OrganizationNotFoundError] },
    args: {
      id: t.arg.string({
        description: 'Organization id.',
        validate: z.string().regex(ORGANIZATION_ID_PATTERN, 'must be an organization id'),
      }),
      vaultId: t.arg.string(vaultIdArg),
    },
    resolve: async (_root, args, context) => {
      const organization = { id: args.id, vaultId: vaultOf(context, args.vaultId) };
      // Reads the first page the members connection will need anyway: it proves the organization
      // exists (OrganizationNotFoundError otherwise, src/upstream/accounts/error-table.ts).
      await context.loaders.organizationMembers.load({
        ...organization,
        organizationId: args.id,
        pageNumber: 1,
        pageSize: UPSTREAM_PAGE_SIZE,
      });
      return organization;
    },
  }),
);

/** The `organizationId` argument of the organization list fields, checked before any upstream read. */
const organizationIdArg = {
  description: 'Organization id (24 characters).',
  validate: z.string().regex(ORGANIZATION_ID_PATTERN, 'must be an organization id'),
} as const;

/** How the organization list fields report failures, for their descriptions. */
const ORGANIZATION_LIST_ERRORS =
  'Needs `organization-users:read`. Forward pagination only (`first`, `after`). Null on failure, with the error in `errors[].extensions.code`: `unauthenticated`, `forbidden`, `vault-required`, `vault-not-allowed`, `invalid-input`, `not-found` (no such organization), or an upstream code.';

builder.queryField('organizationMembers', (t) =>
  t.connection(
    {
      type: MemberType,
      description: `Users of an organization, pending invitations excluded, read with the caller's vault credentials. ${ORGANIZATION_LIST_ERRORS}`,
      authScopes: { scope: 'organization-users:read' },
      args: { organizationId: t.arg.string(organizationIdArg), vaultId: t.arg.string(vaultIdArg) },
      ...rootOrganizationConnection((loaders) => loaders.organizationMembers),
    },
    {
      name: 'OrganizationMemberConnection',
      description: 'A page of organization members with its pagination state.',
    },
    { name: 'OrganizationMemberEdge', description: 'One organization member of a page, with its cursor.' },
  ),
);

builder.queryField('organizationInvites', (t) =>
  t.connection(
    {
      type: InviteType,
      description: `Pending invitations to an organization, read with the caller's vault credentials. ${ORGANIZATION_LIST_ERRORS}`,
      authScopes: { scope: 'organization-users:read' },
      args: { organizationId: t.arg.string(organizationIdArg), vaultId: t.arg.string(vaultIdArg) },
      ...rootOrganizationConnection((loaders) => loaders.organizationInvites),
    },
    {
      name: 'OrganizationInviteConnection',
      description: 'A page of pending organization invitations with its pagination state.',
    },
    { name: 'OrganizationInviteEdge', description: 'One pending invitation of a page, with its cursor.' },
  ),
);

/**
 * {@link organizationConnection} as a root field: the organization comes from the `organizationId`
 * and `vaultId` arguments instead of a parent `Organization`. An organization the upstream does
 * not know fails with `OrganizationNotFoundError` (`not-found`) from its first page read.
 */
function rootOrganizationConnection<T extends { vaults: readonly MemberVault[] }>(
  loaderOf: (loaders: Loaders) => { load(key: OrganizationPageKey): Promise<Page<T>> },
) {
  const connection = organizationConnection(loaderOf);
  return {
    ...connection,
    resolve: (
      _root: unknown,
      args: PagingArgs & { organizationId: string; vaultId?: string | null },
      context: GraphQLContext,
    ) =>
      connection.resolve({ id: args.organizationId, vaultId: vaultOf(context, args.vaultId) }, args, context),
  };
}
