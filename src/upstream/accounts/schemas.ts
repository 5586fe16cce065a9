import { z } from 'zod';
import { InvalidArgumentError } from '../errors.ts';
import { isoTimestamp, openEnum } from '../wire.ts';
import type { MemberVault, OrganizationInvite, OrganizationMember, Page, PageRequest } from './types.ts';

/**
 * zod schemas of the organization members area's JSON:API collections (spec "Organization member
 * (user)"; docs/gap-decisions.md "Organization members"), transforming one page into {@link Page},
 * plus the checks and query of the request.
 */

const roleWire = openEnum(['owner', 'admin', 'developer', 'viewer']);

const vaultWire = z
  .object({
    id: z.string().min(1),
    name: z.string(),
    role: roleWire,
    env_identifier: openEnum(['LIVE', 'SANDBOX']),
  })
  .transform(
    (wire): MemberVault => ({
      id: wire.id,
      name: wire.name,
      role: wire.role,
      envIdentifier: wire.env_identifier,
    }),
  );

const memberResource = z
  .object({
    id: z.string().min(1),
    type: z.literal('users'),
    attributes: z.object({
      created_at: isoTimestamp,
      name: z.string(),
      email_address: z.string().min(1),
      vaults: z.array(vaultWire),
      role: roleWire,
      permissions: z.array(openEnum(['read', 'write', 'admin'])),
      sso_id: z.string().nullable().optional(),
    }),
  })
  .transform(({ id, attributes: a }): OrganizationMember => {
    const member: OrganizationMember = {
      id,
      name: a.name,
      emailAddress: a.email_address,
      role: a.role,
      permissions: a.permissions,
      createdAt: a.created_at,
      vaults: a.vaults,
    };
    if (a.sso_id) member.ssoId = a.sso_id;
    return member;
  });

const inviteResource = z
  .object({
    id: z.string().min(1),
    type: z.literal('invites'),
    attributes: z.object({
      created_at: isoTimestamp,
      email_address: z.string().min(1),
      role: roleWire,
      vaults: z.array(vaultWire),
      invited_by: z.string().min(1),
      state: openEnum(['pending']),
    }),
  })
  .transform(
    ({ id, attributes: a }): OrganizationInvite => ({
      id,
      emailAddress: a.email_address,
      role: a.role,
      vaults: a.vaults,
      invitedBy: a.invited_by,
      state: a.state,
      createdAt: a.created_at,
    }),
  );

const PAGE_NUMBER = /^[1-9]\d{0,8}$/;

/**
 * `links.next`: a link (path-absolute or absolute) carrying `page[number]` and usually `page[size]`,
 * or null on the last page → the {@link Page.nextPage} request.
 */
const nextLinkWire = z
  .string()
  .nullable()
  .optional()
  .transform((link, ctx): Page<unknown>['nextPage'] => {
    if (link === null || link === undefined) return undefined;
    let query: URLSearchParams;
    try {
      query = new URL(link, 'http://upstream.invalid').searchParams;
    } catch {
      query = new URLSearchParams();
    }
    const number = query.get('page[number]');
    const size = query.get('page[size]');
    if (number === null || !PAGE_NUMBER.test(number) || (size !== null && !PAGE_NUMBER.test(size))) {
      ctx.addIssue({ code: 'custom', message: 'expected page[number] and page[size] in the next link' });
      return z.NEVER;
    }
    return size === null ? { number: Number(number) } : { number: Number(number), size: Number(size) };
  });

/** `{"data":[…], "links":{…,"next"}, "meta":{"total"}}` with `item` resources → {@link Page}. */
function pageSchema<T>(item: z.ZodType<T>) {
  return z
    .object({
      data: z.array(item),
      links: z.object({ next: nextLinkWire }).optional(),
      meta: z.object({ total: z.number().int().min(0).optional() }).optional(),
    })
    .transform((wire): Page<T> => {
      const page: Page<T> = { items: wire.data };
      if (wire.meta?.total !== undefined) page.total = wire.meta.total;
      const next = wire.links?.next;
      if (next !== undefined) page.nextPage = next;
      return page;
    });
}

/** A page of `users` (`GET /organizations/{organizationId}/members`) → `Page<OrganizationMember>`. */
export const membersPageSchema = pageSchema(memberResource);

/** A page of `invites` (`GET /organizations/{organizationId}/invites`) → `Page<OrganizationInvite>`. */
export const invitesPageSchema = pageSchema(inviteResource);

/** Organization ids: `AC` + 22 characters in the provider's examples; letters, digits, `_`, `-`. */
const ORGANIZATION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Validates a caller-supplied organization id before it reaches a URL path.
 * @throws InvalidArgumentError (argument `organizationId`) unless 1 to 128 letters, digits, `_` or `-`.
 */
export function assertOrganizationId(organizationId: string): void {
  if (typeof organizationId !== 'string' || !ORGANIZATION_ID.test(organizationId)) {
    throw new InvalidArgumentError('organizationId', 'expected 1 to 128 letters, digits, _ or -');
  }
}

/**
 * The query string of a page request: `?page[number]=…&page[size]=…` (brackets percent-encoded), or
 * `''` when neither is given. The upstream enforces its own maximum size (400 `bad-request`).
 * @throws InvalidArgumentError (argument `page`) when `number` or `size` is not a positive integer.
 */
export function pageQuery(page: PageRequest | undefined): string {
  if (!page) return '';
  const params = new URLSearchParams();
  for (const [key, value] of [
    ['number', page.number],
    ['size', page.size],
  ] as const) {
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new InvalidArgumentError('page', `${key} must be a positive integer`);
    }
    params.set(`page[${key}]`, String(value));
  }
  const query = params.toString();
  return query === '' ? '' : `?${query}`;
}
