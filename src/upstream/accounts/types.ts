/**
 * Domain types of the organization members client (spec "Organization member (user)", area
 * `{accounts_url}`, media type `application/vnd.api+json`). Field names are camelCase.
 */

/** `permissions` items (spec: `read`, `write`, `admin` observed); other values pass through. */
export type MemberPermission = 'read' | 'write' | 'admin' | (string & {});

/** `vaults[].env_identifier` (spec: `LIVE` observed; `SANDBOX` in the sandbox); other values pass through. */
export type VaultEnvironment = 'LIVE' | 'SANDBOX' | (string & {});

/** A vault a member can access, with the member's role in it (spec, `attributes.vaults[]`). */
export interface MemberVault {
  id: string;
  name: string;
  role: string;
  envIdentifier: VaultEnvironment;
}

/**
 * A user linked to an organization (spec "Organization member (user)"; docs/gap-decisions.md
 * "Organization members").
 * - `id`: the user id (`data[].id`).
 * - `role`: the organization role, as sent.
 * - `ssoId`: absent for users without single sign-on.
 * - `createdAt`: ISO 8601 UTC with milliseconds.
 */
export interface OrganizationMember {
  id: string;
  name: string;
  emailAddress: string;
  role: string;
  permissions: MemberPermission[];
  ssoId?: string;
  createdAt: string;
  vaults: MemberVault[];
}

/**
 * A pending invitation to an organization (`GET /organizations/{organizationId}/invites`, shape per
 * docs/gap-decisions.md "Organization members").
 */
export interface OrganizationInvite {
  id: string;
  emailAddress: string;
  role: string;
  createdAt: string;
  expiresAt?: string;
}

/** Which page of a list to read (docs/gap-decisions.md "Organization members", pagination). */
export interface PageRequest {
  /** 1-based page number; 1 when absent. */
  number?: number;
  /** Items per page; the upstream default when absent. */
  size?: number;
}

/**
 * One page of a list.
 * - `items`: the page's items, in upstream order.
 * - `total`: number of items over all pages, when the upstream says.
 * - `nextPage`: the request of the following page; absent on the last page.
 */
export interface Page<T> {
  items: T[];
  total?: number;
  nextPage?: PageRequest;
}
