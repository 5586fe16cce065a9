import { OrganizationNotFoundError } from '../../errors.ts';
import type { UpstreamErrorTable } from '../gateway-errors.ts';

/**
 * Organization members failures the graph types. A 404 of the members list is the organization
 * unknown to the vault's credentials (its id is the only variable of the path). A 404 of the invites
 * list is that only when its code says so (`organization-not-found`): the provider names the invites
 * endpoint without documenting it, so a 404 there may be the endpoint itself, and stays an
 * `UpstreamError` (status 404, the upstream's code) rather than claiming the organization is missing
 * (docs/gap-decisions.md "Organization members").
 */
export const ACCOUNTS_ERRORS: UpstreamErrorTable = {
  area: 'accounts',
  rules: [
    { status: 404, method: 'listMembers', error: () => new OrganizationNotFoundError() },
    { status: 404, code: 'organization-not-found', error: () => new OrganizationNotFoundError() },
  ],
};
