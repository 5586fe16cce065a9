import { z } from 'zod';
import { isoTimestamp, openEnum } from './common.ts';

/**
 * The organization members area (`{accounts_url}`, `application/vnd.api+json`) written once: spec
 * "Organization member (user)" and its endpoint, with the invites listing and the JSON:API paging of
 * docs/gap-decisions.md "Organization members". Imported by the upstream client
 * (src/upstream/accounts), the sandbox (src/sandbox/organization-members.ts) and the GraphQL input
 * validation (src/schema/organization.ts).
 */

/** Media type of the area (spec, area table). */
export const ACCOUNTS_MEDIA_TYPE = 'application/vnd.api+json';

/** Organization roles (spec: `role`, values not shown; docs/gap-decisions.md). */
export const MEMBER_ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
/** Organization permissions (spec: `read`, `write`, `admin` observed). */
export const MEMBER_PERMISSIONS = ['read', 'write', 'admin'] as const;
/** `env_identifier` of a vault membership (spec: `LIVE` observed; the sandbox's vault 1 is `SANDBOX`). */
export const VAULT_ENVIRONMENTS = ['LIVE', 'SANDBOX'] as const;
/** Invitation states: `pending` only (accepted ones become members). */
export const INVITE_STATES = ['pending'] as const;
/**
 * An organization id (`AC` + 22 characters in the provider's examples): 1 to 64 letters or digits.
 * The GraphQL argument (src/schema/organization.ts) and the upstream client (before the id reaches a
 * URL path) check the same rule.
 */
export const ORGANIZATION_ID_PATTERN = /^[A-Za-z0-9]{1,64}$/;
/** A page number or size of `page[number]` / `page[size]`: a positive integer. */
export const PAGE_NUMBER_PATTERN = /^[1-9]\d{0,8}$/;

/** One item of a user's or invitation's `vaults` (spec: `id`, `name`, `role`, `env_identifier`). */
export const vaultMembership = z.object({
  id: z.string().min(1),
  name: z.string(),
  role: openEnum(MEMBER_ROLES),
  env_identifier: openEnum(VAULT_ENVIRONMENTS),
});

/**
 * A JSON:API resource of the area whose attributes hold what users and invitations share
 * (`created_at`, an optional echo of `id`, `email_address`, `role`, `vaults`) plus `attributes`.
 */
function organizationResource<const Type extends string, Shape extends z.ZodRawShape>(
  type: Type,
  attributes: Shape,
) {
  return z.object({
    id: z.string().min(1),
    type: z.literal(type),
    attributes: z.object({
      created_at: isoTimestamp,
      id: z.string().min(1).optional(),
      email_address: z.string().min(1),
      role: openEnum(MEMBER_ROLES),
      vaults: z.array(vaultMembership),
      ...attributes,
    }),
  });
}

/**
 * A `users` resource (spec "Organization member (user)"; the documented example, provider-docs
 * `examples.json`, shows the same members). Read tolerantly: members the contract does not name are
 * ignored, `permissions` may be absent (read as none), `sso_id` absent or null.
 */
export const memberResource = organizationResource('users', {
  name: z.string(),
  permissions: z.array(openEnum(MEMBER_PERMISSIONS)).default([]),
  sso_id: z.string().nullable().optional(),
});

/** An `invites` resource (the spec does not show it; docs/gap-decisions.md "Organization members"). */
export const inviteResource = organizationResource('invites', {
  invited_by: z.string().min(1),
  state: openEnum(INVITE_STATES),
});

/**
 * A JSON:API page of `item` resources: `data`, `links.next` (a link carrying `page[number]` and
 * `page[size]`, null on the last page) and `meta.total`. The provider's documented answer is `data`
 * alone (no `links`, no `meta`): the whole list in one answer (docs/gap-decisions.md "Organization
 * members").
 */
export function pageDocument<Item extends z.ZodType>(item: Item) {
  return z.object({
    data: z.array(item),
    links: z
      .object({
        self: z.string().optional(),
        first: z.string().optional(),
        last: z.string().optional(),
        prev: z.string().nullable().optional(),
        next: z.string().nullable().optional(),
      })
      .optional(),
    meta: z.object({ total: z.int().min(0).optional() }).optional(),
  });
}
