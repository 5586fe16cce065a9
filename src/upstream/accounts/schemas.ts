import { z } from 'zod';
import {
  inviteResource,
  memberResource,
  ORGANIZATION_ID_PATTERN,
  PAGE_NUMBER_PATTERN,
  pageDocument,
} from '../../contracts/accounts.ts';
import { camelCaseKeys } from '../../lib/case.ts';
import { InvalidArgumentError } from '../errors.ts';
import type { Page, PageRequest } from './types.ts';

/**
 * zod schemas of the organization members area's JSON:API collections (spec "Organization member
 * (user)"; docs/gap-decisions.md "Organization members"), transforming one page into {@link Page},
 * plus the checks and query of the request.
 */

/**
 * A `users` resource → organization member: `id`, the attributes camelCased (`name`, `emailAddress`,
 * `role`, `permissions`, `createdAt` ISO 8601 UTC with milliseconds, `vaults` of `{id, name, role,
 * envIdentifier}`), `ssoId` only when the upstream gave one.
 */
const memberSchema = memberResource.transform(({ id, attributes: { sso_id: ssoId, id: _id, ...a } }) => ({
  ...camelCaseKeys(a),
  id,
  ...(ssoId ? { ssoId } : {}),
}));

/** An `invites` resource → invitation: `id`, the attributes camelCased (`invitedBy`, `state`, …). */
const inviteSchema = inviteResource.transform(({ id, attributes: { id: _id, ...a } }) => ({
  ...camelCaseKeys(a),
  id,
}));

/** A member of an organization (spec "Organization member (user)"), see `memberSchema`. */
export type OrganizationMember = z.output<typeof memberSchema>;
/** A pending invitation (docs/gap-decisions.md "Organization members"), see `inviteSchema`. */
export type OrganizationInvite = z.output<typeof inviteSchema>;
/** One vault of a membership or invitation. */
export type MemberVault = OrganizationMember['vaults'][number];

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
    if (
      number === null ||
      !PAGE_NUMBER_PATTERN.test(number) ||
      (size !== null && !PAGE_NUMBER_PATTERN.test(size))
    ) {
      ctx.addIssue({ code: 'custom', message: 'expected page[number] and page[size] in the next link' });
      return z.NEVER;
    }
    return size === null ? { number: Number(number) } : { number: Number(number), size: Number(size) };
  });

/**
 * A page of the contract (`{"data":[…], "links":{…,"next"}, "meta":{"total"}}`) with `item` resources
 * projected → {@link Page}; `links.next` read into the next page request. An answer without `links`
 * (the documented `{"data":[…]}`) is the whole list: `whole`, no `nextPage`.
 */
function pageSchema<T>(item: z.ZodType<T>) {
  return pageDocument(item).transform((wire, ctx): Page<T> => {
    const page: Page<T> = { items: wire.data };
    if (wire.links === undefined) page.whole = true;
    if (wire.meta?.total !== undefined) page.total = wire.meta.total;
    const next = nextLinkWire.safeParse(wire.links?.next);
    if (!next.success) {
      ctx.addIssue({ code: 'custom', message: 'expected page[number] and page[size] in the next link' });
      return z.NEVER;
    }
    if (next.data !== undefined) page.nextPage = next.data;
    return page;
  });
}

/** A page of `users` (`GET /organizations/{organizationId}/members`) → `Page<OrganizationMember>`. */
export const membersPageSchema = pageSchema(memberSchema);

/** A page of `invites` (`GET /organizations/{organizationId}/invites`) → `Page<OrganizationInvite>`. */
export const invitesPageSchema = pageSchema(inviteSchema);

/**
 * Validates a caller-supplied organization id before it reaches a URL path.
 * @throws InvalidArgumentError (argument `organizationId`) unless 1 to 64 letters or digits
 *   (`ORGANIZATION_ID_PATTERN`, the rule of the GraphQL argument too).
 */
export function assertOrganizationId(organizationId: string): void {
  if (typeof organizationId !== 'string' || !ORGANIZATION_ID_PATTERN.test(organizationId)) {
    throw new InvalidArgumentError('organizationId', 'expected 1 to 64 letters or digits');
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
