import { ACCOUNTS_MEDIA_TYPE } from '../../contracts/accounts.ts';
import { areaClient } from '../authorized-request.ts';
import type { UpstreamCall } from '../http.ts';
import {
  assertOrganizationId,
  invitesPageSchema,
  membersPageSchema,
  type OrganizationInvite,
  type OrganizationMember,
  pageQuery,
} from './schemas.ts';
import type { Page, PageRequest } from './types.ts';

export type { MemberVault, OrganizationInvite, OrganizationMember } from './schemas.ts';
export type * from './types.ts';

/**
 * Client of the organization members area (spec "Organization members", area `{accounts_url}`,
 * `application/vnd.api+json`): the members and the pending invitations of an organization, one
 * JSON:API page at a time. The vault only selects the client credentials (a service account, scope
 * `organization-users:read`); the lists are the organization's, not the vault's.
 *
 * Errors: {@link InvalidArgumentError} for a malformed `organizationId` or page (nothing is sent);
 * {@link UpstreamError} with area `accounts` (or `oauth`) otherwise: 400 `bad-request` (a page
 * parameter out of range), 401 `unauthorized`, 403 `forbidden` (token without
 * `organization-users:read`), 404 `not-found` (unknown organization), 5xx, `timeout`,
 * `invalid-response`.
 */
export class AccountsClient extends areaClient('accounts', ACCOUNTS_MEDIA_TYPE) {
  /**
   * `GET /organizations/{organizationId}/members` (spec): one page of the organization's users,
   * pending invitations excluded. Follow {@link Page.nextPage} for the rest. Idempotent: retried on
   * 502/503/504 and connection resets by the HTTP client.
   */
  async listMembers(
    vault: string,
    organizationId: string,
    page?: PageRequest,
  ): Promise<Page<OrganizationMember>> {
    return this.#list(vault, organizationId, 'members', page, membersPageSchema);
  }

  /**
   * `GET /organizations/{organizationId}/invites` (spec names it; shape per docs/gap-decisions.md
   * "Organization members"): one page of the organization's pending invitations.
   */
  async listInvites(
    vault: string,
    organizationId: string,
    page?: PageRequest,
  ): Promise<Page<OrganizationInvite>> {
    return this.#list(vault, organizationId, 'invites', page, invitesPageSchema);
  }

  async #list<T>(
    vault: string,
    organizationId: string,
    collection: 'members' | 'invites',
    page: PageRequest | undefined,
    schema: NonNullable<UpstreamCall<Page<T>>['schema']>,
  ): Promise<Page<T>> {
    assertOrganizationId(organizationId);
    return this.send(vault, {
      method: 'GET',
      path: ['organizations', organizationId, collection],
      subject: organizationId,
      query: pageQuery(page),
      expectStatus: [200],
      schema,
    });
  }
}
