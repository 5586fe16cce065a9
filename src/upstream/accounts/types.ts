/**
 * Domain types of the organization members client (spec "Organization member (user)" and
 * "Organization members", area `{accounts_url}`, media type `application/vnd.api+json`). Field names
 * are camelCase.
 *
 * The enumerations below list the values known from the spec's observations and the sandbox; an
 * upstream value outside them is passed through as a string, so a new value never fails a read.
 */

/** Role in the organization or in one vault (docs/gap-decisions.md "Organization members"). */
export type MemberRole = 'owner' | 'admin' | 'developer' | 'viewer' | (string & {});

/** `permissions` items (spec: `read`, `write`, `admin` observed). */
export type MemberPermission = 'read' | 'write' | 'admin' | (string & {});

/** `vaults[].env_identifier` (spec: `LIVE` observed; `SANDBOX` in the sandbox). */
export type VaultEnvironment = 'LIVE' | 'SANDBOX' | (string & {});

/** State of an invitation: `pending` (accepted invitations become members and leave the list). */
export type InviteState = 'pending' | (string & {});

/**
 * A vault a member (or invitee) can access, with the role in it (spec, `attributes.vaults[]`).
 * `id` is the vault (tenant) id, 11 characters in the sandbox.
 */
export interface MemberVault {
  id: string;
  name: string;
  role: MemberRole;
  envIdentifier: VaultEnvironment;
}

/**
 * A user linked to an organization (spec "Organization member (user)"; `GET
 * /organizations/{organizationId}/members`, pending invitations excluded).
 * - `id`: the user id (`USsandbox…` in the sandbox).
 * - `role`: organization role; `permissions`: organization permissions.
 * - `ssoId`: identifier at the identity provider; absent when the upstream sends none.
 * - `createdAt`: ISO 8601 UTC with milliseconds.
 * - `vaults`: the vaults the member can access (may be empty).
 */
export interface OrganizationMember {
  id: string;
  name: string;
  emailAddress: string;
  role: MemberRole;
  permissions: MemberPermission[];
  ssoId?: string;
  createdAt: string;
  vaults: MemberVault[];
}

/**
 * A pending invitation to an organization (`GET /organizations/{organizationId}/invites`; shape per
 * docs/gap-decisions.md "Organization members", the spec does not show it).
 * - `role`, `vaults`: what the invitee gets on accepting.
 * - `invitedBy`: id of the member who sent it.
 * - `createdAt`: when it was sent, ISO 8601 UTC with milliseconds.
 */
export interface OrganizationInvite {
  id: string;
  emailAddress: string;
  role: MemberRole;
  vaults: MemberVault[];
  invitedBy: string;
  state: InviteState;
  createdAt: string;
}

/**
 * Which page of a list to read (JSON:API `page[number]`, `page[size]`; docs/gap-decisions.md
 * "Organization members").
 * - `number`: 1-based page number; the upstream default (1) when absent.
 * - `size`: items per page; the upstream default (20 in the sandbox, at most 100) when absent.
 */
export interface PageRequest {
  number?: number;
  size?: number;
}

/**
 * One page of a list.
 * - `items`: the page's items, in upstream order (oldest first in the sandbox); empty past the last page.
 * - `total`: number of items over all pages (`meta.total`), when the upstream sends it.
 * - `nextPage`: the request of the following page (from `links.next`); absent on the last page.
 */
export interface Page<T> {
  items: T[];
  total?: number;
  nextPage?: { number: number; size?: number };
}
