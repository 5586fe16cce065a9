import type { z } from 'zod';
import type {
  inviteResource,
  MEMBER_PERMISSIONS,
  MEMBER_ROLES,
  memberResource,
  VAULT_ENVIRONMENTS,
  vaultMembership,
} from '../contracts/accounts.ts';
import type { SandboxWire } from '../contracts/wire-reading.ts';
import {
  type ErrorObject,
  HttpError,
  httpError,
  JSON_API_MEDIA_TYPE,
  type Router,
  sendJson,
} from './http.ts';
import { SANDBOX_ORG_ID } from './oauth.ts';

/**
 * Organization members area (`{accounts_url}` = `/accounts`, application/vnd.api+json): the members and
 * the pending invitations of the sandbox organization, as seeded data. Spec "Organization member
 * (user)" and "Organization members"; contract §2 (organization, scope); docs/gap-decisions.md
 * "Organization members".
 */

/** Path prefix of the area in the sandbox (contract §1). */
export const ACCOUNTS_PREFIX = '/accounts';

/** Page size when `page[size]` is absent. */
export const DEFAULT_PAGE_SIZE = 20;
/** Largest accepted `page[size]`. */
export const MAX_PAGE_SIZE = 100;

/** Environment of a vault (`env_identifier`), a value of the contract's list. */
export type VaultEnvironment = (typeof VAULT_ENVIRONMENTS)[number];
/** Role of a user in the organization or in one vault, a value of the contract's list. */
export type MemberRole = (typeof MEMBER_ROLES)[number];
/** Organization permission, a value of the contract's list. */
export type MemberPermission = (typeof MEMBER_PERMISSIONS)[number];

/** One item of a user's or invitation's `vaults` (src/contracts/accounts.ts). */
export type VaultMembership = z.input<typeof vaultMembership> & {
  role: MemberRole;
  env_identifier: VaultEnvironment;
};

/** `attributes` of a `users` resource, exactly as sent (spec "Organization member (user)"). */
export type MemberAttributes = Required<
  Omit<z.input<typeof memberResource>['attributes'], 'vaults' | 'sso_id'>
> & {
  vaults: VaultMembership[];
  /** Identifier of the user at the identity provider (a UUID in the sandbox). */
  sso_id: string;
};

/** `attributes` of an `invites` resource (our shape: the spec does not show it). */
export type InviteAttributes = Required<Omit<z.input<typeof inviteResource>['attributes'], 'vaults'>> & {
  vaults: VaultMembership[];
};

/** The two sandbox vaults as they appear in memberships (contract §2). */
const VAULT_1 = { id: 'tntsandbox1', name: 'Sandbox vault 1', env_identifier: 'SANDBOX' } as const;
const VAULT_2 = { id: 'tntsandbox2', name: 'Sandbox vault 2', env_identifier: 'LIVE' } as const;

/** A membership of `vault` with `role`, members in the spec's order. */
function access(vault: typeof VAULT_1 | typeof VAULT_2, role: MemberRole): VaultMembership {
  return { id: vault.id, name: vault.name, role, env_identifier: vault.env_identifier };
}

const PERMISSIONS_OF_ROLE: Record<MemberRole, MemberPermission[]> = {
  owner: ['read', 'write', 'admin'],
  admin: ['read', 'write', 'admin'],
  developer: ['read', 'write'],
  viewer: ['read'],
};

function member(
  n: number,
  name: string,
  email: string,
  createdAt: string,
  role: MemberRole,
  vaults: VaultMembership[],
): MemberAttributes {
  const id = `USsandbox${String(n).padStart(15, '0')}`;
  return {
    created_at: createdAt,
    id,
    name,
    email_address: email,
    vaults,
    role,
    permissions: [...PERMISSIONS_OF_ROLE[role]],
    sso_id: `8d2f4c7e-5b1a-4e3c-9a6d-${String(n).padStart(12, '0')}`,
  };
}

/**
 * Members of the sandbox organization `ACsandbox000000000000001`, oldest first: eight users across
 * both vaults with every role, one without vault access. Ids `USsandbox000000000000001` … `…008`.
 */
export const SANDBOX_MEMBERS: readonly MemberAttributes[] = Object.freeze([
  member(1, 'Ada Lovelace', 'ada.lovelace@example.com', '2024-01-15T09:30:00.000Z', 'owner', [
    access(VAULT_1, 'admin'),
    access(VAULT_2, 'admin'),
  ]),
  member(2, 'Grace Hopper', 'grace.hopper@example.com', '2024-02-03T14:05:12.345Z', 'admin', [
    access(VAULT_1, 'admin'),
    access(VAULT_2, 'developer'),
  ]),
  member(3, 'Alan Turing', 'alan.turing@example.com', '2024-03-21T08:00:00.120Z', 'developer', [
    access(VAULT_1, 'developer'),
  ]),
  member(4, 'Katherine Johnson', 'katherine.johnson@example.com', '2024-05-09T16:45:30.000Z', 'developer', [
    access(VAULT_2, 'developer'),
  ]),
  member(5, 'Edsger Dijkstra', 'edsger.dijkstra@example.com', '2024-07-30T11:11:11.111Z', 'viewer', [
    access(VAULT_1, 'viewer'),
    access(VAULT_2, 'viewer'),
  ]),
  member(6, 'Barbara Liskov', 'barbara.liskov@example.com', '2024-10-02T07:20:45.500Z', 'admin', [
    access(VAULT_2, 'admin'),
  ]),
  member(7, 'Donald Knuth', 'donald.knuth@example.com', '2025-01-14T19:00:00.001Z', 'viewer', []),
  member(8, 'Margaret Hamilton', 'margaret.hamilton@example.com', '2025-06-18T12:34:56.789Z', 'developer', [
    access(VAULT_1, 'developer'),
    access(VAULT_2, 'viewer'),
  ]),
]);

/** Pending invitations of the sandbox organization, oldest first. Ids `INsandbox000000000000001` … `…003`. */
export const SANDBOX_INVITES: readonly InviteAttributes[] = Object.freeze([
  {
    created_at: '2025-09-01T10:00:00.000Z',
    id: 'INsandbox000000000000001',
    email_address: 'linus.torvalds@example.com',
    role: 'developer',
    vaults: [access(VAULT_1, 'developer')],
    invited_by: 'USsandbox000000000000001',
    state: 'pending',
  },
  {
    created_at: '2025-10-12T15:30:00.250Z',
    id: 'INsandbox000000000000002',
    email_address: 'radia.perlman@example.com',
    role: 'viewer',
    vaults: [access(VAULT_2, 'viewer')],
    invited_by: 'USsandbox000000000000002',
    state: 'pending',
  },
  {
    created_at: '2025-11-20T08:15:42.900Z',
    id: 'INsandbox000000000000003',
    email_address: 'ken.thompson@example.com',
    role: 'admin',
    vaults: [access(VAULT_1, 'admin'), access(VAULT_2, 'admin')],
    invited_by: 'USsandbox000000000000001',
    state: 'pending',
  },
]);

/** `page[number]` and `page[size]` of a request, validated. */
interface PageRequest {
  number: number;
  size: number;
}

/**
 * Reads JSON:API pagination from the query string. Other parameters are ignored; a repeated parameter
 * keeps its first value.
 * @throws HttpError 400 `bad-request` with `source.parameter` (`page[number]`: an integer ≥ 1;
 *   `page[size]`: an integer 1 to {@link MAX_PAGE_SIZE}); one error object per bad parameter.
 */
function pageRequest(rawUrl: string): PageRequest {
  const query = new URL(rawUrl, 'http://sandbox.invalid').searchParams;
  const errors: ErrorObject[] = [];
  const read = (name: string, fallback: number, max: number): number => {
    const raw = query.get(name);
    if (raw === null) return fallback;
    const value = /^[1-9]\d{0,8}$/.test(raw) ? Number(raw) : Number.NaN;
    if (Number.isNaN(value) || value > max) {
      errors.push({
        status: '400',
        code: 'bad-request',
        detail: `${name} must be an integer from 1 to ${max}`,
        source: { parameter: name },
      });
      return fallback;
    }
    return value;
  };
  const number = read('page[number]', 1, 999_999_999);
  const size = read('page[size]', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  if (errors.length > 0) throw new HttpError(400, errors);
  return { number, size };
}

/** Path-absolute link to one page of a collection (brackets percent-encoded: a valid URI reference). */
function pageLink(path: string, number: number, size: number): string {
  return `${path}?${new URLSearchParams({ 'page[number]': String(number), 'page[size]': String(size) })}`;
}

/**
 * One page of a JSON:API collection: `{data, links: {self, first, last, prev, next}, meta: {total}}`.
 * `prev`/`next` are `null` when there is no such page; a page past the last has empty `data`.
 */
function pageDocument<T>(
  path: string,
  items: readonly T[],
  toResource: (item: T) => unknown,
  page: PageRequest,
) {
  const last = Math.max(1, Math.ceil(items.length / page.size));
  const start = (page.number - 1) * page.size;
  return {
    data: items.slice(start, start + page.size).map(toResource),
    links: {
      self: pageLink(path, page.number, page.size),
      first: pageLink(path, 1, page.size),
      last: pageLink(path, last, page.size),
      prev: page.number > 1 ? pageLink(path, Math.min(page.number - 1, last), page.size) : null,
      next: page.number < last ? pageLink(path, page.number + 1, page.size) : null,
    },
    meta: { total: items.length },
  };
}

/** Seeded data of {@link registerOrganizationMemberRoutes}; the sandbox organization by default. */
export interface OrganizationDirectory {
  /** organization id → its members and pending invitations, each oldest first. */
  organizations: ReadonlyMap<
    string,
    { members: readonly MemberAttributes[]; invites: readonly InviteAttributes[] }
  >;
}

/** The sandbox organization of contract §2 with {@link SANDBOX_MEMBERS} and {@link SANDBOX_INVITES}. */
export const SANDBOX_DIRECTORY: OrganizationDirectory = {
  organizations: new Map([[SANDBOX_ORG_ID, { members: SANDBOX_MEMBERS, invites: SANDBOX_INVITES }]]),
};

/**
 * Registers under {@link ACCOUNTS_PREFIX}, both with scope `organization-users:read`, for tokens of any
 * vault of the organization:
 * - `GET /organizations/{organizationId}/members`: 200 page of `users` (pending invitations excluded).
 * - `GET /organizations/{organizationId}/invites`: 200 page of `invites` (pending only).
 * Specification wire: query `page[number]` (default 1), `page[size]` (default
 * {@link DEFAULT_PAGE_SIZE}, at most {@link MAX_PAGE_SIZE}); answers carry `links` and `meta.total`
 * (see `pageDocument`); 400 `bad-request` (`source.parameter` names the bad page parameter).
 * Documented wire (the provider's example, sandbox contract §8): `{"data":[…]}`, the whole list,
 * without `links` and `meta`; page parameters are not read.
 * Errors: 401, 403, 404 `not-found` for an organization other than the sandbox's.
 */
export function registerOrganizationMemberRoutes(
  router: Router,
  directory: OrganizationDirectory = SANDBOX_DIRECTORY,
  /** The wire reading to answer in (`SandboxOptions.wire`); `documented` by default. */
  wire: SandboxWire = 'documented',
): void {
  /** The answer of a list: one page (specification) or the whole list in `data` (documented). */
  const listDocument = <T>(
    path: string,
    rawUrl: string,
    items: readonly T[],
    toResource: (item: T) => unknown,
  ): unknown =>
    wire === 'documented'
      ? { data: items.map(toResource) }
      : pageDocument(path, items, toResource, pageRequest(rawUrl));

  const organizationOr404 = (id: string) => {
    const organization = directory.organizations.get(id);
    if (!organization) throw httpError(404, 'not-found', 'no such organization');
    return organization;
  };

  router.add(
    'GET',
    `${ACCOUNTS_PREFIX}/organizations/:organizationId/members`,
    'organization-users:read',
    ({ req, res, params, path }) => {
      const { members } = organizationOr404(params.organizationId!);
      const toResource = (attributes: MemberAttributes) => ({ id: attributes.id, type: 'users', attributes });
      sendJson(res, 200, listDocument(path, req.url ?? path, members, toResource), JSON_API_MEDIA_TYPE);
    },
  );

  router.add(
    'GET',
    `${ACCOUNTS_PREFIX}/organizations/:organizationId/invites`,
    'organization-users:read',
    ({ req, res, params, path }) => {
      const { invites } = organizationOr404(params.organizationId!);
      const toResource = (attributes: InviteAttributes) => ({
        id: attributes.id,
        type: 'invites',
        attributes,
      });
      sendJson(res, 200, listDocument(path, req.url ?? path, invites, toResource), JSON_API_MEDIA_TYPE);
    },
  );
}
